import FoundationEssentials
@_spi(GrowBuiltIn) import GrowConfig
import GrowCore
import GrowLoop
import GrowMessages
@_spi(GrowBuiltIn) import GrowPluginKit

/// Plays a sound from the desktop's sound theme when a focus or a break runs its course (and,
/// if asked, on a distraction), through libcanberra and the sound server (PulseAudio, or
/// PipeWire's pulse server). dunst and mako play nothing themselves, so without this a focus
/// ends in silence.
///
/// A phase the person ends (skip, stop) makes no sound: they know. Quiet hours and the
/// person's Do-Not-Disturb (`during-dnd = false`) keep it silent; a muted output stays muted,
/// since the server mixes the sound into it. Playing never waits on the loop (`CanberraOutput`).
public final class SoundPlugin: GrowPlugin {
  public static let id = "sound"
  public static let settings = SoundSettings.declared
  public static var summary: String {
    Message(
      "sounds when a focus or a break ends (and on distractions, if asked), from the sound theme"
    ).render()
  }
  static let descriptions: [SoundMoment: Message] = [
    .focusOver: Message("Focus over"), .breakOver: Message("Break over"),
    .distraction: Message("Distraction"),
  ]

  private let settings: SoundSettings
  private let context: PluginContext
  private let output: any SoundOutput
  /// Do-Not-Disturb as the dnd plugin last announced it.
  private var doNotDisturb = false
  /// The reason the server could not be reached, while it cannot.
  private var missingServer: String?

  public convenience init(context: PluginContext) throws {
    let output: CanberraOutput
    do {
      output = try CanberraOutput(loop: context.loop, applicationName: "Grow")
    } catch {
      throw PluginError.failed(error.message)
    }
    try self.init(context: context, output: output)
  }

  /// With any output: canberra's, or a recording one in tests.
  init(context: PluginContext, output: any SoundOutput) throws {
    do {
      settings = try SoundSettings(context.config, cards: context.timer.deck.names)
    } catch {
      throw PluginError.misconfigured(error.description)
    }
    self.context = context
    self.output = output
    context.subscribe(PhaseEnded.self) { [weak self] event in self?.ended(event) }
    context.subscribe(DistractionStarted.self) { [weak self] event in
      self?.play(.distraction, card: event.card)
    }
    context.subscribe(DoNotDisturbChanged.self) { [weak self] event in
      self?.doNotDisturb = event.enabled
    }
  }

  private func ended(_ event: PhaseEnded) {
    guard event.outcome == .completed else { return }
    play(event.phase.kind == .focus ? .focusOver : .breakOver, card: event.phase.card)
  }

  private func play(_ moment: SoundMoment, card: String) {
    guard let choice = settings.sound(for: moment, card: card) else { return }
    if doNotDisturb, !settings.duringDoNotDisturb { return }
    if let quiet = settings.quietHours, quiet.contains(minute: minuteOfDay(context.loop.now)) {
      return
    }
    var request = SoundRequest(
      decibels: settings.decibels, description: Self.descriptions[moment]?.render() ?? "")
    switch choice {
    case .event(let id): request.eventID = id
    case .file(let path): request.file = path
    case .off, .themed: return
    }
    output.play(request) { [weak self] outcome in self?.heard(outcome, for: request) }
  }

  /// A missing server makes the plugin unavailable (with the reason, in `grow plugins`) until
  /// a sound plays again; a sound that cannot play (a typo in an event id) is logged.
  private func heard(_ outcome: PlayOutcome, for request: SoundRequest) {
    switch outcome {
    case .played:
      if missingServer != nil {
        missingServer = nil
        context.setAvailable()
      }
    case .noServer(let reason):
      if missingServer != reason {
        missingServer = reason
        context.setUnavailable(reason)
      }
    case .failed(let reason):
      context.log.warning(
        "cannot play \(request.file ?? request.eventID ?? "a sound"): \(reason)")
    }
  }

  private func minuteOfDay(_ instant: Date) -> Int {
    let local =
      Int(instant.timeIntervalSince1970.rounded(.down))
      + context.loop.zone.secondsFromGMT(for: instant)
    return ((local % 86_400) + 86_400) % 86_400 / 60
  }
}

@_cdecl("grow_plugin_sound")
public func growPlugin() -> UnsafeRawPointer { growPluginDescriptor(SoundPlugin.self) }
