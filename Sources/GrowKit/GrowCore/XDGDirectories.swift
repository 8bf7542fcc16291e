import Foundation

/// The XDG base directories (XDG Base Directory Specification) for one environment, and
/// Grow's own folder in each. A relative `XDG_*` value is ignored, as the specification says.
public struct XDGDirectories: Sendable, Equatable {
  public let home: String
  private let environment: [String: String]

  public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
    self.environment = environment
    let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
    self.home = home.count > 1 && home.hasSuffix("/") ? String(home.dropLast()) : home
  }

  /// `$XDG_STATE_HOME`, else `~/.local/state`: logs and the running session.
  public var stateHome: String { base("XDG_STATE_HOME", ".local/state") }
  /// `$XDG_DATA_HOME`, else `~/.local/share`: the history, plugins, D-Bus service files.
  public var dataHome: String { base("XDG_DATA_HOME", ".local/share") }
  /// `$XDG_CONFIG_HOME`, else `~/.config`.
  public var configHome: String { base("XDG_CONFIG_HOME", ".config") }

  /// Grow's folder in the state directory.
  public var growState: String { stateHome + "/grow" }

  private func base(_ variable: String, _ fallback: String) -> String {
    if let value = environment[variable], value.hasPrefix("/") { return value }
    return home + "/" + fallback
  }
}
