import FoundationEssentials
import Glibc
import GrowConfig
import GrowCore
import GrowDaemon
import GrowMessages

/// Reads the config (the default path when `path` is nil), checking `[plugin.ID]` sections
/// against what the plugins found declare. Errors come out as they are: one
/// `FILE:LINE: message` per problem.
@MainActor
func loadConfiguration(_ path: String?) throws(ConfigError) -> GrowConfig {
  try GrowConfig.load(path: path, pluginSettings: declaredPluginSettings())
}

/// What the plugins found in the standard directories declare, opened only when asked.
@MainActor
func declaredPluginSettings(
  environment: [String: String] = ProcessInfo.processInfo.environment
) -> PluginSettingsLookup {
  let directories = PluginDirectories.standard(environment: environment)
  // The config is parsed on this thread, the main one.
  return { id in
    MainActor.assumeIsolated { PluginHost.declaredSettings(of: id, directories: directories) }
  }
}

/// The config's problems as the daemon would see them at start (each `FILE:LINE: message`), or
/// nil when it would start with it.
@MainActor
func configurationProblems(
  environment: [String: String] = ProcessInfo.processInfo.environment
) -> String? {
  do {
    let config = try GrowConfig.load(
      environment: environment, pluginSettings: declaredPluginSettings(environment: environment))
    let problems = PluginHost.configurationProblems(
      in: config, directories: .standard(environment: environment))
    return problems.isEmpty ? nil : problems.joined(separator: "\n")
  } catch {
    return error.description
  }
}

/// Why a daemon that D-Bus activation started exited before answering. Its own words went to
/// the bus daemon's stderr (and its log); the usual reason, the config, the CLI reads itself.
@MainActor
func whyActivationFailed(busMessage: String) -> String {
  guard let problems = configurationProblems() else {
    return Message(
      "the grow daemon that D-Bus activation started exited at once ({error}); "
        + "'grow logs' says why"
    ).render(["error": busMessage])
  }
  return Message(
    "the grow daemon that D-Bus activation started exited at once: the config has "
      + "problems; nothing was started:\n{problems}\nfix them, then run the command again "
      + "('grow config check' checks the file)"
  ).render(["problems": problems])
}

/// Where `[plugin.notify] warn-before` shows, when it is set: Do-Not-Disturb holds
/// notifications during focus (and Grow sends a paused server nothing), so the bars say it.
func warnBeforeNote(_ config: GrowConfig) -> String? {
  guard let section = config.pluginSections["notify"], let entry = section["warn-before"],
    let warn = try? section.duration("warn-before", default: 0), warn > 0
  else { return nil }
  return Message(
    "{path}:{line}: warn-before = {duration} shows on status bars ('grow status --format "
      + "i3bar|i3blocks|polybar|waybar': colour {colour}, waybar class ending-soon); as a "
      + "notification only while Do-Not-Disturb is off, so not during focus"
  ).render([
    "path": section.path, "line": entry.line, "duration": DurationText.format(warn),
    "colour": StatusBarRenderer.endingSoonColor,
  ])
}

extension Commands {
  /// The config the daemon starts with. A broken config stops the daemon from starting, so the
  /// person fixes it now instead of wondering later why their card is missing.
  static func loadConfigurationOrExplain(_ path: String?) throws(CLIError) -> GrowConfig {
    let config: GrowConfig
    do {
      config = try loadConfiguration(path)
    } catch {
      throw .failed(nothingStarted(becauseOf: error.description))
    }
    let unknown = PluginHost.unknownSections(in: config, directories: .standard())
    guard unknown.isEmpty else {
      throw .failed(nothingStarted(becauseOf: ConfigError(unknown).description))
    }
    return config
  }

  /// `grow config check [PATH]` and `grow config cards`.
  static func runConfig(_ words: [String]) throws(CLIError) {
    let arguments = try parse(words, flags: ["json"], usage: "config")
    if arguments.positionals.first == "cards" {
      try expect(arguments, atMost: 1, "config")
      return try printCardNames()
    }
    guard arguments.positionals.first == "check" else {
      throw .usage(
        Message("usage: grow {command} {synopsis}").render([
          "command": "config", "synopsis": "check [PATH] | grow config cards",
        ]))
    }
    try expect(arguments, atMost: 2, "config")
    let path = arguments.positionals.count > 1 ? arguments.positionals[1] : nil
    let shownPath = path ?? GrowConfig.defaultPath()
    do {
      let config = try loadConfiguration(path)
      let problems = PluginHost.configurationProblems(in: config, directories: .standard())
      guard problems.isEmpty else { throw CLIError.failed(problems.joined(separator: "\n")) }
      // Warnings do not fail the check: Grow runs such a config as it is. They come first, each with its file and line.
      for warning in config.warnings { say(warning.description) }
      if let note = warnBeforeNote(config) { say(note) }
      let values: [String: any CustomStringConvertible] = [
        "path": shownPath, "count": config.warnings.count,
        "cards": config.deck.names.joined(separator: ", "),
        "default": config.deck.defaultCardName,
      ]
      let summary =
        if config.path == nil {
          Message(
            "no config file at {path}; using the defaults (cards: {cards}; default: {default})"
          ).render(values)
        } else if config.warnings.isEmpty {
          Message("{path}: ok (cards: {cards}; default: {default})").render(values)
        } else {
          Message(
            one: "{path}: ok, {count} warning (cards: {cards}; default: {default})",
            other: "{path}: ok, {count} warnings (cards: {cards}; default: {default})",
            countedBy: "count"
          ).render(values)
        }
      say(summary)
    } catch let error as ConfigError {
      throw .failed(error.description)
    } catch let error as CLIError {
      throw error
    } catch {
      throw .failed("\(error)")
    }
  }
}

extension Commands {
  /// `grow config cards`: the card names of config.ini, one a line, read without a daemon so
  /// shell completion works before the daemon runs.
  static func printCardNames() throws(CLIError) {
    do {
      // Without opening plugin libraries: completion runs this on every Tab.
      say(try GrowConfig.load().deck.names.joined(separator: "\n"))
    } catch {
      throw .failed(error.description)
    }
  }
}
