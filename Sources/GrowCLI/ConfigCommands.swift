import Foundation
import GrowConfig
import GrowCore

/// Reads the config (the default path when `path` is nil). Errors come out as they are: one
/// `FILE:LINE: message` per problem.
func loadConfiguration(_ path: String?) throws(ConfigError) -> GrowConfig {
  try GrowConfig.load(path: path)
}

extension Commands {
  /// The config the daemon starts with. A broken config stops the daemon from starting, so the
  /// person fixes it now instead of wondering later why their card is missing.
  static func loadDaemonConfig(_ path: String?) throws(CLIError) -> GrowConfig {
    do {
      return try loadConfiguration(path)
    } catch {
      throw .failed("the config has problems; nothing was started:\n\(error.description)")
    }
  }

  /// `grow config check [PATH]`.
  static func runConfig(_ words: [String]) throws(CLIError) {
    let arguments = try parse(words, flags: ["json"], usage: "config")
    guard arguments.positionals.first == "check" else {
      throw .usage("usage: grow config check [PATH]")
    }
    try expect(arguments, atMost: 2, "config")
    let path = arguments.positionals.count > 1 ? arguments.positionals[1] : nil
    let shownPath = path ?? GrowConfig.defaultPath()
    do {
      let config = try loadConfiguration(path)
      let source =
        config.path == nil ? "no config file at \(shownPath); using the defaults" : "\(shownPath): ok"
      say("\(source) (cards: \(config.deck.names.joined(separator: ", ")); default: "
          + "\(config.deck.defaultCardName))")
    } catch {
      throw .failed(error.description)
    }
  }
}
