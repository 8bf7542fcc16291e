// grow-soak: the fault-injection soak of issues 9, 14 and 31, as `make soak` runs it. Prints the
// table (or --json) and exits 1 when an invariant broke, 2 on bad usage.
import Foundation
import GrowSoak

let usage = """
  usage: grow-soak [--faults N] [--seed S] [--time-limit SECONDS] [--kinds K1,K2]
                   [--hang-rounds N] [--rss-limit MIB] [--fd-limit N] [--json] [--quiet]
    --faults N            faults to inject (default 500)
    --seed S              the random seed; a failing run prints its seed to reproduce it
    --time-limit SECONDS  the whole run's bound (default 600); injection stops in time
    --kinds K1,K2         only these kinds of fault (names as in the table), or the groups
                          classic (nothing lost), stress (peers that hang), trust (hostile peers),
                          sync (Syncthing stopped, a synced journal cut short), all (the default)
    --hang-rounds N       rounds of the plugin-hang check after the faults (default 3)
    --rss-limit MIB       the daemon's resident set bound (default 256; 0: none)
    --fd-limit N          the daemon's open descriptors bound (default 256; 0: none)
    --json                the report as JSON instead of the table
    --quiet               no progress lines on stderr
  runs Xvfb, openbox and dunst of its own; the data directory's tmpfs needs root
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
    let groups = [
      "classic": FaultKind.classic, "stress": FaultKind.stress, "trust": FaultKind.trust,
      "sync": FaultKind.sync, "all": FaultKind.allCases,
    ]
    let kinds = names.map { groups[$0] ?? FaultKind(rawValue: $0).map { [$0] } ?? [] }
    guard !kinds.contains(where: \.isEmpty), !kinds.isEmpty else {
      fail(
        "--kinds takes classic, stress, trust, sync, all or names from: "
          + FaultKind.allCases.map(\.rawValue).joined(separator: ", "))
    }
    options.kinds = Set(kinds.joined())
  case "--hang-rounds":
    guard let rounds = Int(value(argument)), rounds >= 0 else {
      fail("--hang-rounds takes a count")
    }
    options.hangRounds = rounds
  case "--rss-limit":
    guard let limit = Int(value(argument)), limit >= 0 else { fail("--rss-limit takes MiB") }
    options.rssLimitMiB = limit
  case "--fd-limit":
    guard let limit = Int(value(argument)), limit >= 0 else { fail("--fd-limit takes a count") }
    options.descriptorLimit = limit
  case "--json": json = true
  case "--quiet": quiet = true
  case "--help", "-h":
    print(usage)
    exit(0)
  default: fail("unknown argument '\(argument)'")
  }
}
// `make soak`'s timeout ends a soak that hangs with SIGTERM: the data directory's tmpfs is
// unmounted (lazily: the daemon may still hold it) before the process goes.
nonisolated(unsafe) var mountedDirectory: UnsafeMutablePointer<CChar>?
options.mounted = { path in mountedDirectory = strdup(path) }
for signalNumber in [SIGTERM, SIGINT] {
  signal(signalNumber) { number in
    if let directory = mountedDirectory { umount2(directory, Int32(MNT_DETACH)) }
    _exit(128 + number)
  }
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
