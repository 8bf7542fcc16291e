import FoundationEssentials
import Glibc
import GrowCore
import GrowDBus
import GrowMessages
@_spi(GrowBuiltIn) import GrowPluginKit

/// Puts the notification server back from the DND restore record, outside the dnd plugin's
/// life: `grow dnd restore` (systemd's ExecStopPost= after the daemon exited, or by hand) and
/// the daemon's start before any plugin loads (`Daemon.start`). A daemon that died while the
/// server did not answer (SIGTERM during a SIGSTOP, SIGKILL, a crash) otherwise left the
/// desktop silenced until its next start, which after a logout may be never.
///
/// Idempotent: the record goes once the server is back (or was put back by hand); without a
/// record there is nothing to do. A server that does not answer keeps the record.
public struct DoNotDisturbRestorer: Sendable {
  package let file: DoNotDisturbRestoreFile
  /// Each call to the server waits at most this long (read, then write).
  public let timeout: Int32

  /// The default wait per call: a live server answers in milliseconds; a stopped one should
  /// not hold up a logout (systemd waits for ExecStopPost=) or a start for long.
  public static let defaultTimeout: Int32 = 2000

  /// The plugin that writes the record.
  public static let pluginID = "dnd"

  public init(environment: [String: String], timeout: Int32 = Self.defaultTimeout) {
    file = DoNotDisturbRestoreFile(environment: environment)
    self.timeout = timeout
  }

  public enum Outcome: Equatable, Sendable {
    /// No record: Grow left nothing silenced.
    case nothingToRestore
    /// The server was switched back to what it was before Grow (the record is gone).
    case restored(backend: String)
    /// The server no longer had what Grow set (changed by hand, or restarted): the record is
    /// gone, nothing was written.
    case alreadyBack(backend: String)
    /// KDE: its inhibition ended with the daemon's connection; the record is gone.
    case releasedWithConnection(backend: String)
    /// The record was not one Grow can use (why); it was removed, since no Grow would ever
    /// act on it, and the person is told what to check.
    case damaged(Worded)
    /// The server could not be switched back (why, and what to do); the record is kept.
    case failed(backend: String, reason: Worded)

    /// Whether the desktop is known to be as the person had it.
    public var succeeded: Bool {
      switch self {
      case .nothingToRestore, .restored, .alreadyBack, .releasedWithConnection: true
      case .damaged, .failed: false
      }
    }
  }

  /// Blocks for at most two calls' `timeout` (GNOME: two runs of gsettings); any thread.
  public func run(busAddress: () throws -> String) -> Outcome {
    let record: DoNotDisturbRestoreRecord
    switch file.read() {
    case .none: return .nothingToRestore
    case .damaged(let why):
      file.remove()
      return .damaged(
        Worded(
          Message(
            "{path}: {why}; removed it. Grow cannot tell what to put back: check your "
              + "notification server's Do-Not-Disturb (dunst: 'dunstctl set-paused false')"),
          ["path": file.path, "why": why]))
    case .record(let found): record = found
    // A kind of contents a newer GrowKit tells apart (it is built with library evolution).
    @unknown default:
      return .damaged(
        Worded(Message("{path} cannot be read by this Grow; it is kept"), ["path": file.path]))
    }
    let outcome: DoNotDisturbPutBack
    if record.backend == DoNotDisturbBackend.gnome.rawValue {
      outcome = GnomeBanners.putBack(record, timeout: timeout)
    } else {
      let address: String
      do {
        address = try busAddress()
      } catch {
        return .failed(
          backend: record.backend,
          reason: Worded(
            Message(
              "cannot reach {server}: {error}; {path} keeps what to put back, run "
                + "'grow dnd restore' in the session"),
            ["server": record.backend, "error": "\(error)", "path": file.path]))
      }
      outcome = record.putBack(busAddress: address, timeout: timeout)
    }
    switch outcome {
    case .restored:
      file.remove()
      return .restored(backend: record.backend)
    case .alreadyBack:
      file.remove()
      return .alreadyBack(backend: record.backend)
    case .releasedWithConnection:
      file.remove()
      return .releasedWithConnection(backend: record.backend)
    case .notOnTheBus:
      return .failed(
        backend: record.backend,
        reason: Worded(
          Message("this Grow cannot switch '{server}' back; {path} is kept for a Grow that can"),
          ["server": record.backend, "path": file.path]))
    case .failed(let why):
      return .failed(
        backend: record.backend,
        reason: Worded(
          Message(
            "{why}. Is it stopped or hanging? Check it ('ps -o stat= -C {server}' shows T when "
              + "stopped), then run 'grow dnd restore' again; {path} keeps what to put back"),
          ["why": why, "server": record.backend, "path": file.path]))
    @unknown default:
      return .failed(
        backend: record.backend,
        reason: Worded(Message("a newer GrowKit's answer; {path} is kept"), ["path": file.path]))
    }
  }
}

/// GNOME's Do-Not-Disturb is the GSettings key `org.gnome.desktop.notifications show-banners`
/// (false while silenced). The daemon and the CLI do not link GIO (the dnd plugin does), so
/// they run `gsettings`, which GNOME always has, with the same timeout as a bus call.
enum GnomeBanners {
  static func putBack(_ record: DoNotDisturbRestoreRecord, timeout: Int32)
    -> DoNotDisturbPutBack
  {
    let key = ["org.gnome.desktop.notifications", "show-banners"]
    guard let shown = run(["gsettings", "get"] + key, timeout: timeout) else {
      return .failed("gsettings did not answer reading show-banners")
    }
    // Silenced means banners hidden.
    let silenced = shown.hasPrefix("false")
    guard silenced == record.set else { return .alreadyBack }
    let value = record.previous ? "false" : "true"
    guard run(["gsettings", "set"] + key + [value], timeout: timeout) != nil else {
      return .failed("gsettings did not confirm setting show-banners back")
    }
    return .restored
  }

  /// Standard output of a successful run; nil if it failed or outlived `timeout` ms (killed).
  private static func run(_ arguments: [String], timeout: Int32) -> String? {
    guard let result = Subprocess.capture(arguments, stream: STDOUT_FILENO, timeout: timeout),
      result.exit == .exited(0)
    else { return nil }
    return result.output
  }
}
