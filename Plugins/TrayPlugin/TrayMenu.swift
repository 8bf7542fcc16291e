import FoundationEssentials
import GrowCore
import GrowMessages
import GrowPluginKit

/// What a menu entry does when the person clicks it.
enum TrayAction: Equatable, Sendable {
  case start(card: String)
  case pause
  case resume
  case skip
  case stop
  case extend(minutes: Int)
  case shorten(minutes: Int)
  case toggleDoNotDisturb

  /// What the wheel over the icon asks for (StatusNotifierItem's `Scroll`): a notch up adds a
  /// minute, down takes one off, sideways does nothing. Hosts disagree on the sign, which the
  /// specification leaves open: the GTK ones (waybar, xfce4-panel's Status Tray) pass GDK's
  /// delta, negative for up, a step or so a notch; the Qt ones pass the wheel's angle,
  /// positive for up, 120 a notch, and KDE Plasma spells the orientation "Vertical" where
  /// the others (LXQt too) write "vertical".
  static func wheel(delta: Int32, orientation: String) -> TrayAction? {
    guard delta != 0, orientation.lowercased() == "vertical" else { return nil }
    let angle = orientation == "Vertical" || delta % 120 == 0
    let up = angle ? delta > 0 : delta < 0
    return up ? .extend(minutes: 1) : .shorten(minutes: 1)
  }
}

/// One entry of the tray's menu, as com.canonical.dbusmenu lays it out: an id, a label, and
/// either an action or a submenu. Ids are stable for a given state of the timer and deck, so
/// a host that asks `GetLayout` twice gets the same numbers.
struct TrayMenuItem: Equatable, Sendable {
  var id: Int32
  var label: String
  var action: TrayAction?
  var enabled = true
  /// `checkmark` entries (Do-Not-Disturb) and their state.
  var toggled: Bool?
  var children: [TrayMenuItem] = []
  var isSeparator = false

  static func separator(_ id: Int32) -> TrayMenuItem {
    TrayMenuItem(id: id, label: "", isSeparator: true)
  }
}

/// The tray's menu, tooltip and icon state, made from the timer's status alone (no D-Bus
/// here): tested in milliseconds, and the plugin only sends what this says.
struct TrayModel: Equatable, Sendable {
  var status: TimerStatus
  var cards: [String]
  var doNotDisturb: Bool

  /// The root (id 0) and its entries.
  var menu: TrayMenuItem {
    var items: [TrayMenuItem] = []
    let running = status.hasPhase
    let start = TrayMenuItem(
      id: 1, label: Message("Start").render(),
      children: cards.enumerated().map { index, card in
        TrayMenuItem(id: 100 + Int32(index), label: card, action: .start(card: card))
      })
    if !running && status.state != .waiting {
      items.append(start)
    }
    if status.state == .waiting {
      items.append(TrayMenuItem(id: 2, label: Message("Continue").render(), action: .resume))
    } else if running {
      items.append(
        status.paused
          ? TrayMenuItem(id: 2, label: Message("Resume").render(), action: .resume)
          : TrayMenuItem(id: 3, label: Message("Pause").render(), action: .pause))
      items.append(TrayMenuItem(id: 4, label: Message("Skip").render(), action: .skip))
      items.append(
        TrayMenuItem(id: 5, label: Message("+5 min").render(), action: .extend(minutes: 5)))
    }
    if running || status.state == .waiting {
      items.append(TrayMenuItem(id: 6, label: Message("Stop").render(), action: .stop))
    }
    items.append(.separator(7))
    items.append(
      TrayMenuItem(
        id: 8, label: Message("Do not disturb").render(), action: .toggleDoNotDisturb,
        toggled: doNotDisturb))
    return TrayMenuItem(id: 0, label: "", children: items)
  }

  /// Every entry by id, for `Event` and `GetGroupProperties`.
  var itemsByID: [Int32: TrayMenuItem] {
    var all: [Int32: TrayMenuItem] = [:]
    func walk(_ item: TrayMenuItem) {
      all[item.id] = item
      item.children.forEach(walk)
    }
    walk(menu)
    return all
  }

  /// The tooltip's title and text: the card and phase, the time left at `now`, and today's
  /// focus against the goal.
  func tooltip(at now: Date) -> (title: String, text: String) {
    let today = Message("Today: {focus} of focus").render(["focus": focusText])
    guard let kind = status.state.phaseKind else {
      if status.state == .waiting {
        return (Message("Grow: waiting").render(), today)
      }
      return (Message("Grow").render(), today)
    }
    let left = DurationText.format(remaining(at: now).rounded(.up))
    let title = Message("{phase} on '{card}'").render(["phase": kind.inWords, "card": status.card])
    let line =
      status.paused
      ? Message("Paused, {left} left").render(["left": left])
      : Message("{left} left").render(["left": left])
    return (title, line + "\n" + today)
  }

  private var focusText: String {
    let done = DurationText.format(status.focusToday)
    guard let goal = status.dailyGoal, goal > 0 else { return done }
    return Message("{done} / {goal}").render(["done": done, "goal": DurationText.format(goal)])
  }

  /// Seconds left at `now`.
  func remaining(at now: Date) -> TimeInterval {
    guard !status.paused, let end = status.endsAt else { return status.remaining }
    return max(0, end.timeIntervalSince(now))
  }

  /// How much of the phase has passed, 0…1, in whole minutes left, so the icon changes at
  /// most once a minute.
  func progress(at now: Date) -> Double {
    guard status.hasPhase, status.duration > 0 else { return 0 }
    let minutesLeft = (remaining(at: now) / 60).rounded(.up)
    let totalMinutes = max(1, (status.duration / 60).rounded(.up))
    return min(1, max(0, 1 - minutesLeft / totalMinutes))
  }

  /// When `progress` next changes: the next whole minute of time left; nil while nothing
  /// counts down.
  func nextProgressChange(after now: Date) -> Date? {
    guard status.hasPhase, !status.paused, let end = status.endsAt, end > now else { return nil }
    let left = end.timeIntervalSince(now)
    let wholeMinutesAfter = ((left / 60).rounded(.up) - 1) * 60
    return end.addingTimeInterval(-wholeMinutesAfter)
  }

  /// The icon's colour and a themed icon name for hosts that draw names only.
  var phase: TrayPhase {
    switch status.state {
    case .focus: status.paused ? .paused : .focus
    case .shortBreak, .longBreak: status.paused ? .paused : .rest
    case .waiting: .waiting
    case .idle: .idle
    }
  }
}

/// The icon's look per state.
enum TrayPhase: Sendable {
  case idle, focus, rest, paused, waiting

  /// ARGB: a warm red for focus, green for a break, amber while paused or waiting, grey idle.
  var colour: UInt32 {
    switch self {
    case .focus: 0xFFE5_534B
    case .rest: 0xFF57_AB5A
    case .paused, .waiting: 0xFFD2_9922
    case .idle: 0xFF8B_949E
    }
  }

  /// A name every icon theme has (freedesktop icon naming spec), for hosts that draw names.
  var iconName: String {
    switch self {
    case .focus: "appointment-soon"
    case .rest: "face-smile"
    case .paused, .waiting: "media-playback-pause"
    case .idle: "alarm-symbolic"
    }
  }
}
