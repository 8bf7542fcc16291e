import Foundation
@_spi(GrowHost) import GrowPluginKit
import Testing

/// The daemon's log file: owner-only, capped, rotated once.
@Suite struct LogFileTests {
  let directory = FileManager.default.temporaryDirectory
    .appendingPathComponent("grow-log-\(UUID().uuidString)/grow").path

  @Test func aFullFileBecomesTheOlderOneAndANewOneStarts() throws {
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let file = LogFile(path: directory + "/grow.log", limit: 200)
    let logger = Logger(
      label: "daemon", minimumLevel: .info,
      destination: LogDestination(standardError: false, file: file))
    for number in 1...12 { logger.info("line \(number) of a dozen") }

    let current = try String(contentsOfFile: file.path, encoding: .utf8)
    let previous = try String(contentsOfFile: file.previousPath, encoding: .utf8)
    #expect(current.utf8.count <= 200)
    #expect(previous.utf8.count <= 200)
    #expect(current.hasSuffix("grow[daemon] info: line 12 of a dozen\n"))
    // Only whole lines: what was cut off went to the older file, not half of it.
    #expect((previous + current).split(separator: "\n").allSatisfy { $0.contains(" of a dozen") })
    // A third generation would keep more than twice the limit: the oldest lines are gone.
    #expect(!(previous + current).contains("line 1 of a dozen"))
    for path in [file.path, file.previousPath, directory] {
      var info = stat()
      #expect(stat(path, &info) == 0)
      #expect(info.st_mode & 0o077 == 0, "\(path) is owner-only")
    }
  }

  @Test func aMessageWithLineBreaksIsStampedOnEveryLine() throws {
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let file = LogFile(path: directory + "/grow.log")
    Logger(
      label: "notify", minimumLevel: .info,
      destination: LogDestination(standardError: false, file: file)
    ).warning("first\nsecond")
    let lines = try String(contentsOfFile: file.path, encoding: .utf8).split(separator: "\n")
    #expect(lines.count == 2)
    #expect(
      lines.allSatisfy {
        $0.wholeMatch(of: /\d{4}-\d\d-\d\d \d\d:\d\d:\d\d grow\[notify\] warning: \w+/) != nil
      })
  }
}
