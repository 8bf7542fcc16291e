import FoundationEssentials

/// A scheduled one-shot alarm; cancel it when the deadline it stands for changes.
public protocol Alarm: AnyObject {
  func cancel()
}

/// Where the timer gets the time and its wake-ups from.
///
/// The daemon uses wall-clock deadlines on its event loop; tests use GrowPluginTesting's `ManualTimeSource` to run
/// hours of cycles in milliseconds. Deadlines are wall-clock instants because Linux monotonic
/// clocks stop during suspend: a timer anchored to them ends late after every sleep.
public protocol TimeSource: AnyObject {
  var now: Date { get }
  /// The time zone that decides where a day begins.
  var zone: LocalZone { get }
  /// Calls `action` once, on the owner's loop, at or just after `deadline`.
  func schedule(at deadline: Date, _ action: @escaping () -> Void) -> any Alarm
}
