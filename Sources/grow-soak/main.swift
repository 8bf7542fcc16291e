// grow-soak: the fault-injection soak of issue 9, as `make soak` runs it. Prints the table
// (or --json) and exits 1 when an invariant broke, 2 on bad usage.
import Foundation
import GrowSoak

let usage = """
  usage: grow-soak [--faults N] [--seed S] [--time-limit SECONDS] [--kinds K1,K2]
                   [--json] [--quiet]
    --faults N            faults to inject (default 500)
    --seed S              the random seed; a failing run prints its seed to reproduce it
    --time-limit SECONDS  the whole run's bound (default 600); injection stops in time
    --kinds K1,K2         only these kinds of fault (names as in the table)
    --json                the report as JSON instead of the table
    --quiet               no progress lines on stderr
  needs DISPLAY (for dunst): run it through scripts/with-desktop, as `make soak` does
  """

func fail(_ message: String) -> Never {
  FileHandle.standardError.write(Data("grow-soak: \(message)\n\(usage)\n".utf8))
  exit(2)
}

var options = SoakOptions()
var json = false
var quiet = false
var arguments = CommandLine.arguments.dropFirst()
@MainActor func value(_ flag: String) -> String {
  guard let value = arguments.popFirst() else { fail("\(flag) needs a value") }
  return value
}
while let argument = arguments.popFirst() {
  switch argument {
  case "--faults":
    guard let count = Int(value(argument)), count > 0 else { fail("--faults takes a count") }
    options.faults = count
  case "--seed":
    guard let seed = UInt64(value(argument)) else { fail("--seed takes a whole number") }
    options.seed = seed
  case "--time-limit":
    guard let limit = TimeInterval(value(argument)), limit >= 30 else {
      fail("--time-limit takes seconds, at least 30")
    }
    options.timeLimit = limit
  case "--kinds":
    let names = value(argument).split(separator: ",").map {
      $0.trimmingCharacters(in: .whitespaces)
    }
    let kinds = names.compactMap(FaultKind.init(rawValue:))
    guard kinds.count == names.count, !kinds.isEmpty else {
      fail(
        "--kinds takes names from: \(FaultKind.allCases.map(\.rawValue).joined(separator: ", "))")
    }
    options.kinds = Set(kinds)
  case "--json": json = true
  case "--quiet": quiet = true
  case "--help", "-h":
    print(usage)
    exit(0)
  default: fail("unknown argument '\(argument)'")
  }
}
guard !(ProcessInfo.processInfo.environment["DISPLAY"] ?? "").isEmpty else {
  fail("no DISPLAY: dunst needs an X server")
}
if !quiet {
  options.progress = { line in FileHandle.standardError.write(Data((line + "\n").utf8)) }
}
FileHandle.standardError.write(
  Data("grow-soak: seed \(options.seed), \(options.faults) faults\n".utf8))

let report: SoakReport
do {
  report = try Soak(options: options).run()
} catch {
  FileHandle.standardError.write(Data("grow-soak: cannot set up: \(error)\n".utf8))
  exit(1)
}
print(json ? report.json : report.table)
exit(report.passed && !report.stoppedAtTimeLimit ? 0 : 1)
