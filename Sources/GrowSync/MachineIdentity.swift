import FoundationEssentials
import Glibc
@_spi(GrowHost) import GrowCore
import GrowHistory

/// This machine as sync names it: a random id made once and kept in
/// `$XDG_STATE_HOME/grow/machine-id` (a host name can change or be shared by two machines),
/// and the host name, for people to read.
public struct MachineIdentity: Sendable, Equatable {
  /// 16 lowercase hex digits.
  public let id: String
  public let name: String

  public init(id: String, name: String) {
    self.id = id
    self.name = name
  }

  /// `$XDG_STATE_HOME/grow/machine-id`.
  public static func defaultPath(
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) -> String {
    XDGDirectories(environment: environment).growState + "/machine-id"
  }

  /// The id kept at `path`, made (and kept) when there is none yet.
  public static func load(
    path: String = defaultPath(), name: String = MachineIdentity.hostName()
  ) throws(SyncError) -> MachineIdentity {
    if let id = try read(path) { return MachineIdentity(id: id, name: name) }
    do {
      try PrivateFiles.makeDirectory(PathText.directory(of: path))
    } catch {
      throw .machineID(path: path, reason: error.reason)
    }
    var generator = SystemRandomNumberGenerator()
    let hex = String(generator.next() as UInt64, radix: 16)
    let made = String(repeating: "0", count: 16 - hex.count) + hex
    // O_EXCL: two programs making it at once keep the first one's.
    let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
    if descriptor < 0 {
      if errno == EEXIST, let id = try read(path) { return MachineIdentity(id: id, name: name) }
      throw .machineID(path: path, reason: String(cString: strerror(errno)))
    }
    defer { close(descriptor) }
    let line = Array((made + "\n").utf8)
    guard line.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) == line.count,
      fsync(descriptor) == 0
    else {
      let reason = String(cString: strerror(errno))
      unlink(path)
      throw .machineID(path: path, reason: reason)
    }
    return MachineIdentity(id: made, name: name)
  }

  /// The id kept at `path`, if there is one; nil when there is none.
  public static func read(_ path: String) throws(SyncError) -> String? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
    guard descriptor >= 0 else {
      if errno == ENOENT { return nil }
      throw .machineID(path: path, reason: String(cString: strerror(errno)))
    }
    defer { close(descriptor) }
    var buffer = [UInt8](repeating: 0, count: 64)
    let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
    let text = String(decoding: buffer.prefix(max(0, count)), as: UTF8.self)
      .trimming(while: \.isWhitespace)
    guard isValidID(text) else {
      throw .machineID(
        path: path, reason: "it does not hold 16 hex digits; remove it and Grow makes a new one")
    }
    return text
  }

  static func isValidID(_ text: String) -> Bool {
    text.utf8.count == 16
      && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
  }

  /// The host name (`gethostname`), or "unknown".
  public static func hostName() -> String { ThisMachine.name }

  /// This machine's journal in the sync folder: `grow-NAME-ID.jsonl`, the name reduced to
  /// letters, digits, `-` and `_` so that every file system syncs it.
  public var journalName: String {
    let safe = String(
      name.unicodeScalars.map { scalar -> Character in
        scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar))
          || scalar == "-" || scalar == "_" ? Character(scalar) : "_"
      }.prefix(40))
    return "grow-\(safe)-\(id).jsonl"
  }
}
