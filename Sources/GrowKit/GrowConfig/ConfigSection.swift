import FoundationEssentials
import Glibc

/// One `key = value` line as written, after inih trimmed it and dropped any ` ;` comment.
public struct ConfigEntry: Sendable, Equatable {
  public let key: String
  public let value: String
  /// The 1-based line it is on.
  public let line: Int

  public init(key: String, value: String, line: Int) {
    self.key = key
    self.value = value
    self.line = line
  }
}

/// A section of config.ini kept raw, such as `[plugin.notify]`, for its reader to interpret.
///
/// The typed accessors throw `ConfigError` with the file, line and key, in the same words the
/// rest of the config uses:
///
///     let warn = try section.duration("warn-before", default: 60)
public struct ConfigSection: Sendable, Equatable {
  /// The name between the brackets: `plugin.notify`.
  public let name: String
  /// The config file's path, for messages.
  public let path: String
  /// The line of the `[name]` header.
  public let line: Int
  /// The entries in file order; each key at most once.
  public private(set) var entries: [ConfigEntry]

  public init(name: String, path: String, line: Int, entries: [ConfigEntry] = []) {
    self.name = name
    self.path = path
    self.line = line
    self.entries = entries
  }

  /// The keys present, in file order.
  public var keys: [String] { entries.map(\.key) }

  /// The entry for `key`, if present.
  public subscript(key: String) -> ConfigEntry? {
    entries.first { $0.key == key }
  }

  /// The raw value of `key`, if present.
  public func string(_ key: String) -> String? {
    self[key]?.value
  }

  /// The raw value of `key`, or `defaultValue` when absent.
  public func string(_ key: String, default defaultValue: String) -> String {
    self[key]?.value ?? defaultValue
  }

  /// `key` as a duration (`25m`, `90s`, `1h30m`) in seconds, or `defaultValue` when absent.
  public func duration(
    _ key: String, default defaultValue: TimeInterval, minimum: TimeInterval = 0
  ) throws(ConfigError) -> TimeInterval {
    try read(key, defaultValue) { text throws(ValueError) in
      try ValueReader.duration(text, minimum: minimum)
    }
  }

  /// `key` as true/false (also yes/no, on/off, 1/0), or `defaultValue` when absent.
  public func bool(_ key: String, default defaultValue: Bool) throws(ConfigError) -> Bool {
    try read(key, defaultValue) { text throws(ValueError) in try ValueReader.bool(text) }
  }

  /// `key` as a whole number, within `range` if given, or `defaultValue` when absent.
  public func int(
    _ key: String, default defaultValue: Int, in range: ClosedRange<Int>? = nil
  ) throws(ConfigError) -> Int {
    try read(key, defaultValue) { text throws(ValueError) in
      try ValueReader.count(text, in: range)
    }
  }

  /// `key` as a comma-separated list, items trimmed and empty ones dropped, or `defaultValue`
  /// when absent.
  public func list(_ key: String, default defaultValue: [String] = []) -> [String] {
    self[key].map { ValueReader.list($0.value) } ?? defaultValue
  }

  /// Throws, listing every key not in `known`, with a "did you mean" where one is close.
  public func checkKeys(_ known: [String]) throws(ConfigError) {
    let problems = entries.filter { !known.contains($0.key) }.map { entry in
      ConfigProblem(
        path: path, line: entry.line, issue: .unknownKey(entry.key, section: name, known: known))
    }
    if !problems.isEmpty { throw ConfigError(problems) }
  }

  mutating func append(_ entry: ConfigEntry) {
    entries.append(entry)
  }

  private func read<Value>(
    _ key: String, _ defaultValue: Value, _ convert: (String) throws(ValueError) -> Value
  ) throws(ConfigError) -> Value {
    guard let entry = self[key] else { return defaultValue }
    do {
      return try convert(entry.value)
    } catch {
      throw ConfigError(
        ConfigProblem(
          path: path, line: entry.line,
          issue: .invalidValue(key: key, value: entry.value, section: name, reason: error.reason)))
    }
  }
}

@_spi(GrowBuiltIn) extension ConfigSection {
  /// "KEY = 'VALUE' in [SECTION]: REASON" at `entry`'s line: a plugin's own check of a value
  /// its declared kind lets through (an unknown event name, a span of the day).
  public func invalid(_ entry: ConfigEntry, _ reason: String) -> ConfigError {
    ConfigError([
      ConfigProblem(
        path: path, line: entry.line,
        issue: .invalidValue(key: entry.key, value: entry.value, section: name, reason: reason))
    ])
  }
}
