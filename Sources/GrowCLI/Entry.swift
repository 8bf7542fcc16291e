import FoundationEssentials
import Glibc
@_spi(GrowHost) import GrowCore
import GrowMessages

/// Runs `grow` with `arguments` (without the program name) and returns the exit status.
@MainActor
public func runGrow(_ arguments: [String]) -> Int32 {
  guard let name = arguments.first else {
    say(Commands.usageText)
    return 0
  }
  let rest = Array(arguments.dropFirst())
  let command: Command?
  switch name {
  case "--version", "-V": command = Commands.all.first { $0.name == "version" }
  case "--help", "-h": command = Commands.all.first { $0.name == "help" }
  default: command = Commands.all.first { $0.name == name }
  }
  guard let command else {
    reportError(
      CLIError.usage(
        Message("unknown command '{command}'").render(["command": shown(name)])
          + Commands.suggestion(for: name)))
    return 2
  }
  if rest.contains("--help") || rest.contains("-h"), command.name != "help" {
    return runGrow(["help", command.name])
  }
  do {
    try command.run(rest)
    return 0
  } catch {
    reportError(error)
    return error.exitStatus
  }
}

func reportError(_ error: CLIError) {
  if case .silentFailure = error { return }
  // Whatever a message echoes (a daemon's D-Bus error, a word from the command line) reaches
  // the terminal with its control characters escaped.
  let message = escapingControls(error.description, keepingNewlines: true)
  writeAll(prefixedLines(message), to: STDERR_FILENO)
}

/// `grow: ` in front of every line of an error, not only the first: a message that lists
/// problems (`grow config check`, one `FILE:LINE: message` each) reads the same on every line,
/// and a line filtered out of stderr (grep, a log) still says where it came from.
func prefixedLines(_ message: String) -> String {
  message.split(separator: "\n", omittingEmptySubsequences: false)
    .map { $0.isEmpty ? "" : "grow: \($0)" }
    .joined(separator: "\n") + "\n"
}
