import Foundation
import GrowLoop
import Testing

/// DirectoryWatch on real directories, on the main queue as in the daemon.
@MainActor
@Suite struct DirectoryWatchTests {
  func temporaryDirectory() throws -> String {
    let path = FileManager.default.temporaryDirectory
      .appendingPathComponent("grow-dirwatch-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
  }

  /// Creates an empty file in place (FileManager writes a temporary file and renames it).
  func touch(_ path: String) -> Bool {
    let descriptor = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { return false }
    close(descriptor)
    return true
  }

  func settle(until condition: () -> Bool) async throws {
    let deadline = Date().addingTimeInterval(5)
    while !condition(), Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
  }

  @Test func entriesCreatedOrMovedInAreReportedByName() async throws {
    let directory = try temporaryDirectory()
    let outside = try temporaryDirectory()
    defer {
      try? FileManager.default.removeItem(atPath: directory)
      try? FileManager.default.removeItem(atPath: outside)
    }
    var seen: [String] = []
    let watch = try DirectoryWatch(directory: directory) { seen.append($0) }
    defer { watch.cancel() }
    try await Task.sleep(for: .milliseconds(50))
    #expect(seen.isEmpty)
    #expect(touch(directory + "/X7"))
    #expect(touch(outside + "/moved"))
    #expect(rename(outside + "/moved", directory + "/moved") == 0)
    try await settle { seen.count >= 2 }
    #expect(seen == ["X7", "moved"])
  }

  /// `grow logs --follow`: a file that grows is reported each time it is written, by name;
  /// a watch that did not ask hears nothing of it.
  @Test func writesAreReportedOnlyToAWatchThatAsks() async throws {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    #expect(touch(directory + "/grow.log"))
    var written: [String] = []
    var appeared: [String] = []
    let asking = try DirectoryWatch(
      directory: directory, appeared: { appeared.append($0) }, written: { written.append($0) })
    defer { asking.cancel() }
    var heardByOther: [String] = []
    let other = try DirectoryWatch(directory: directory) { heardByOther.append($0) }
    defer { other.cancel() }
    let log = open(directory + "/grow.log", O_WRONLY | O_APPEND | O_CLOEXEC)
    defer { close(log) }
    _ = write(log, "one\n", 4)
    try await settle { !written.isEmpty }
    #expect(written.first == "grow.log")
    #expect(touch(directory + "/new"))
    try await settle { appeared == ["new"] && heardByOther == ["new"] }
    #expect(appeared == ["new"])
    #expect(heardByOther == ["new"])
  }

  @Test func aMissingDirectoryIsWaitedForAndWhatItHoldsIsReported() async throws {
    let parent = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: parent) }
    let directory = parent + "/.X11-unix"
    var seen: Set<String> = []
    let watch = try DirectoryWatch(directory: directory) { seen.insert($0) }
    defer { watch.cancel() }
    #expect(touch(parent + "/unrelated"))
    // Made with its first entry already in it, as an X server does on a fresh /tmp.
    let staging = parent + "/staging"
    try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: false)
    #expect(touch(staging + "/X3"))
    #expect(rename(staging, directory) == 0)
    try await settle { seen.contains("X3") }
    #expect(touch(directory + "/X4"))
    try await settle { seen.contains("X4") }
    #expect(seen == ["X3", "X4"])
  }

  @Test func aPathThatCannotBeADirectorySaysWhy() {
    #expect(
      throws: DirectoryWatchError.cannotWatch(path: "/dev/null/sub", reason: "Not a directory")
    ) {
      try DirectoryWatch(directory: "/dev/null/sub") { _ in }
    }
  }

  @Test func nothingIsReportedAfterCancel() async throws {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var seen: [String] = []
    let watch = try DirectoryWatch(directory: directory) { seen.append($0) }
    watch.cancel()
    #expect(touch(directory + "/late"))
    try await Task.sleep(for: .milliseconds(100))
    #expect(seen.isEmpty)
  }
}
