import Foundation
import GrowCore
import Testing

@Suite("PrivateFiles")
struct PrivateFilesTests {
  let root = FileManager.default.temporaryDirectory.appendingPathComponent(
    "grow-private-\(UUID().uuidString)"
  ).path

  func mode(_ path: String) -> Int {
    var info = stat()
    return lstat(path, &info) == 0 ? Int(info.st_mode & 0o777) : -1
  }

  @Test func replaceMakesTheFileAndEveryMissingDirectoryOwnerOnly() throws {
    defer { try? FileManager.default.removeItem(atPath: root) }
    let file = root + "/a/b/status.json"
    try PrivateFiles.replace(file, with: Data("one\n".utf8))
    #expect(mode(root) == 0o700)
    #expect(mode(root + "/a") == 0o700)
    #expect(mode(root + "/a/b") == 0o700)
    #expect(mode(file) == 0o600)
    #expect(try String(contentsOfFile: file, encoding: .utf8) == "one\n")
    #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/a/b") == ["status.json"])
  }

  /// A file or leftover temporary made by something else, readable by all, is not written
  /// into: the new file is a new 0600 one.
  @Test func aReadableOldFileOrLeftoverIsReplacedByAnOwnerOnlyOne() throws {
    defer { try? FileManager.default.removeItem(atPath: root) }
    try PrivateFiles.makeDirectory(root)
    let file = root + "/session.json"
    for path in [file, root + "/.session.json.tmp"] {
      #expect(FileManager.default.createFile(atPath: path, contents: Data("old".utf8)))
      #expect(chmod(path, 0o644) == 0)
    }
    try PrivateFiles.replace(file, with: Data("new".utf8))
    #expect(mode(file) == 0o600)
    #expect(try String(contentsOfFile: file, encoding: .utf8) == "new")
    #expect(!FileManager.default.fileExists(atPath: root + "/.session.json.tmp"))
  }

  @Test func anExistingDirectoryIsLeftAsItIs() throws {
    defer { try? FileManager.default.removeItem(atPath: root) }
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    #expect(chmod(root, 0o750) == 0)
    try PrivateFiles.makeDirectory(root)
    #expect(mode(root) == 0o750)
  }

  @Test func aFileInTheWayIsAClearError() throws {
    defer { try? FileManager.default.removeItem(atPath: root) }
    try PrivateFiles.makeDirectory(root)
    #expect(FileManager.default.createFile(atPath: root + "/grow", contents: nil))
    #expect(throws: PrivateFileError(path: root + "/grow", code: ENOTDIR)) {
      try PrivateFiles.replace(root + "/grow/session.json", with: Data())
    }
    #expect(
      PrivateFileError(path: root + "/grow", code: ENOTDIR).description
        == "\(root)/grow: Not a directory")
  }
}
