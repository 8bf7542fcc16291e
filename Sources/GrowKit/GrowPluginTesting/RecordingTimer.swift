import FoundationEssentials
import GrowCore
import GrowPluginKit

/// A `TimerControl` that records what a plugin asked of it and shows whatever status the test
/// sets, for checking a plugin's commands without running the scheduler. (A plugin that needs
/// phases to run by themselves can have a real `FocusTimer` on a `ManualLoop` instead.)
@MainActor
public final class RecordingTimer: TimerControl {
  /// One command a plugin gave the timer.
  public enum Command: Equatable, Sendable {
    case start(card: String?)
    case pause, resume, toggle, skip, stop
    case extend(seconds: TimeInterval)
    case shorten(seconds: TimeInterval)
  }

  /// What the plugin sees as the timer's status; tests set it to the situation they want.
  public var status: TimerStatus
  public var deck: CardDeck
  /// Every command, in order, refused ones included.
  public private(set) var commands: [Command] = []
  /// When set, every command is refused with this error (after being recorded).
  public var refusal: TimerError?

  public init(status: TimerStatus = .idle, deck: CardDeck = .standard) {
    self.status = status
    self.deck = deck
  }

  private func record(_ command: Command) throws(TimerError) {
    commands.append(command)
    if let refusal { throw refusal }
  }

  public func start(card: String?, overrides: SessionOverrides) throws(TimerError) {
    try record(.start(card: card))
  }
  public func pause() throws(TimerError) { try record(.pause) }
  public func resume() throws(TimerError) { try record(.resume) }
  public func toggle() throws(TimerError) { try record(.toggle) }
  public func skip() throws(TimerError) { try record(.skip) }
  public func stop() throws(TimerError) { try record(.stop) }
  public func shorten(by seconds: TimeInterval) throws(TimerError) {
    try record(.shorten(seconds: seconds))
  }
  public func extend(by seconds: TimeInterval) throws(TimerError) {
    try record(.extend(seconds: seconds))
  }
}
