import FoundationEssentials

/// The XDG base directories (XDG Base Directory Specification) for one environment, and
/// Grow's own folder in each. A relative `XDG_*` value is ignored, as the specification says.
/// The one place Grow reads these variables: the daemon, the plugins and the CLI all ask here.
public struct XDGDirectories: Sendable, Equatable {
  public let home: String
  private let environment: [String: String]

  public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
    self.environment = environment
    let home = PathText.home(environment: environment)
    self.home = home.count > 1 && home.hasSuffix("/") ? String(home.dropLast()) : home
  }

  /// `$XDG_STATE_HOME`, else `~/.local/state`: logs and the running session.
  public var stateHome: String { base("XDG_STATE_HOME", ".local/state") }
  /// `$XDG_DATA_HOME`, else `~/.local/share`: the history, plugins, D-Bus service files.
  public var dataHome: String { base("XDG_DATA_HOME", ".local/share") }
  /// `$XDG_CONFIG_HOME`, else `~/.config`.
  public var configHome: String { base("XDG_CONFIG_HOME", ".config") }

  /// `$XDG_RUNTIME_DIR`, or nil: the specification gives it no fallback.
  public var runtimeDirectory: String? {
    environment["XDG_RUNTIME_DIR"].flatMap { $0.hasPrefix("/") ? $0 : nil }
  }

  /// Grow's folder in the state directory.
  public var growState: String { stateHome + "/grow" }
  /// Grow's folder in the data directory: the history and third-party plugins.
  public var growData: String { dataHome + "/grow" }
  /// Grow's folder in the config directory: config.ini.
  public var growConfig: String { configHome + "/grow" }
  /// The running session the daemon keeps (SessionStore), beside which the phases not yet
  /// in the history wait (PendingPhases).
  public var sessionFile: String { growState + "/session.json" }

  private func base(_ variable: String, _ fallback: String) -> String {
    if let value = environment[variable], value.hasPrefix("/") {
      return value.count > 1 && value.hasSuffix("/") ? String(value.dropLast()) : value
    }
    return home + "/" + fallback
  }
}
