// The only file in GrowConfig that touches C: libinih and the POSIX file calls. Everything
// it hands back is plain Swift values; no pointer leaves this file.
internal import CInih

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// What libinih made of one line of the file.
struct INILineReading {
  /// The name inside `[...]` when the line is a section header.
  var header: String?
  /// The `name = value` pair on the line, if it is one (inih trims both, drops ` ;` comments).
  var entry: (name: String, value: String)?
  /// inih could not parse the line (a name without `=`, a `[` without `]`).
  var malformed = false
  /// The line did not fit inih's line buffer.
  var overflow = false
}

/// Reads lines with libinih's `ini_parse_stream`.
///
/// Each line goes to inih on its own, between a probe section header and a marker key:
///
///     [\u{1}probe]     <- resets inih's section and its "previous key"
///     <the line>
///     \u{1}marker=     <- its callback reports the section inih is in after the line
///
/// That way inih does all the parsing, yet we learn things its API does not tell a caller:
/// the line of every section header (inih only reports sections through their keys), every
/// line it cannot parse (its return value names only the first), and no indented line is ever
/// glued onto the previous value as a multi-line continuation (Debian builds inih with
/// INI_ALLOW_MULTILINE, which would silently swallow an indented `short-break = 5m`).
/// The probe and marker contain a control character, which real lines may not (the caller
/// rejects those before they get here), so they can never clash with the file's own text.
enum INI {
  /// The longest line inih reads whole: its buffer holds INI_MAX_LINE bytes including the
  /// `\r`, `\n` and NUL (see ini.h; Debian builds it with 200, on the stack).
  static let inihLineBytes = Int(INI_MAX_LINE) - 3
  /// The longest line Grow reads. Longer `name = value` lines than inih's buffer (a
  /// `[plugins] enable` of fifty ids) are read by `readLong`; past this, the line is refused.
  static let maxLineBytes = 16 * 1024

  private static let probeSection = "\u{1}probe"
  private static let probeLine = Array("[\(probeSection)]\n".utf8)
  private static let markerLine = Array("\u{1}marker=\n".utf8)

  /// Parses one line (without its line break).
  static func read(line: [UInt8]) -> INILineReading {
    line.count > inihLineBytes ? readLong(line) : readShort(line)
  }

  private static func readShort(_ line: [UInt8]) -> INILineReading {
    let context = Context(chunks: [probeLine, line + [0x0A], markerLine])
    let status = withExtendedLifetime(context) {
      let pointer = Unmanaged.passUnretained(context).toOpaque()
      return ini_parse_stream(readChunk, pointer, handleEntry, pointer)
    }
    context.reading.malformed = status != 0
    return context.reading
  }

  /// A line too long for inih's buffer: inih reads the name (and whether the line is an entry
  /// at all) from the line cut just after its separator; the value, a long header and a long
  /// comment are taken by inih's own rules: up to an inline comment (a `;` after white
  /// space), trimmed.
  private static func readLong(_ line: [UInt8]) -> INILineReading {
    var reading = INILineReading()
    let start = line.firstIndex { !isSpace($0) } ?? line.endIndex
    guard start < line.endIndex else { return reading }
    if line[start] == UInt8(ascii: ";") || line[start] == UInt8(ascii: "#") { return reading }
    if line[start] == UInt8(ascii: "[") {
      // inih's rule for a header; the name is then refused as too long by the caller.
      if let end = endOfText(line, from: start + 1, stoppingAt: [UInt8(ascii: "]")]),
        line[end] == UInt8(ascii: "]")
      {
        reading.header = String(decoding: line[(start + 1)..<end], as: UTF8.self)
      } else {
        reading.malformed = true
      }
      return reading
    }
    guard let separator = endOfText(line, from: start, stoppingAt: [0x3D, 0x3A]),
      line[separator] == 0x3D || line[separator] == 0x3A
    else {
      reading.malformed = true
      return reading
    }
    // A name longer than inih's whole line is no name Grow knows.
    guard separator + 1 <= inihLineBytes else {
      reading.malformed = true
      return reading
    }
    reading = readShort(Array(line[...separator]))
    guard var entry = reading.entry else { return reading }
    let valueStart = separator + 1
    let valueEnd = endOfText(line, from: valueStart, stoppingAt: []) ?? line.endIndex
    var value = line[valueStart..<valueEnd].drop { isSpace($0) }
    while let last = value.last, isSpace(last) { value.removeLast() }
    entry.value = String(decoding: value, as: UTF8.self)
    reading.entry = entry
    return reading
  }

  /// inih's `find_chars_or_comment`: the first of `stops`, or of an inline comment (a `;`
  /// right after white space), from `start`.
  private static func endOfText(_ line: [UInt8], from start: Int, stoppingAt stops: [UInt8])
    -> Int?
  {
    var wasSpace = false
    for index in start..<line.endIndex {
      let byte = line[index]
      if stops.contains(byte) || (wasSpace && byte == UInt8(ascii: ";")) { return index }
      wasSpace = isSpace(byte)
    }
    return nil
  }

  private static func isSpace(_ byte: UInt8) -> Bool {
    byte == 0x20 || (0x09...0x0D).contains(byte)
  }

  private final class Context {
    let chunks: [[UInt8]]
    var next = 0
    var reading = INILineReading()

    init(chunks: [[UInt8]]) { self.chunks = chunks }
  }

  /// The fgets-like reader: hands inih the next chunk, NUL-terminated.
  private static let readChunk: ini_reader = { buffer, size, stream in
    guard let buffer, let stream else { return nil }
    let context = Unmanaged<Context>.fromOpaque(stream).takeUnretainedValue()
    guard context.next < context.chunks.count, size >= 2 else { return nil }
    var chunk = context.chunks[context.next]
    context.next += 1
    if chunk.count > Int(size) - 1 {
      // Never let inih split a line: feed an empty one and say so.
      context.reading.overflow = true
      chunk = [0x0A]
    }
    for (index, byte) in chunk.enumerated() { buffer[index] = CChar(bitPattern: byte) }
    buffer[chunk.count] = 0
    return buffer
  }

  private static let handleEntry: ini_handler = { user, section, name, value in
    guard let user else { return 0 }
    let context = Unmanaged<Context>.fromOpaque(user).takeUnretainedValue()
    let sectionName = section.map { String(cString: $0) } ?? ""
    if context.next == context.chunks.count {
      // The marker: inih's section tells whether the line was a header.
      if sectionName != probeSection { context.reading.header = sectionName }
    } else {
      let key = name.map { String(cString: $0) } ?? ""
      context.reading.entry = (key, value.map { String(cString: $0) } ?? "")
    }
    return 1
  }
}

/// Reading a whole file, with the reason from the system when that fails.
enum RawFile {
  enum Outcome: Equatable {
    case bytes([UInt8])
    /// Nothing at that path (or a path component is not a directory).
    case missing
    /// More than `limit` bytes.
    case tooLarge
    /// A FIFO, a device or a socket: reading it could wait forever or never end.
    case notRegular(kind: String)
    case failed(reason: String)
  }

  /// Reads at most `limit` bytes of the file at `path`.
  static func contents(of path: String, limit: Int) -> Outcome {
    // O_NONBLOCK: opening a FIFO would otherwise wait for a writer, forever. It means nothing
    // for the regular file read below.
    let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
    guard descriptor >= 0 else {
      let code = errno
      return code == ENOENT || code == ENOTDIR ? .missing : .failed(reason: describe(code))
    }
    defer { close(descriptor) }
    var status = stat()
    guard fstat(descriptor, &status) == 0 else { return .failed(reason: describe(errno)) }
    switch status.st_mode & S_IFMT {
    case S_IFREG: break
    case S_IFDIR: return .failed(reason: describe(EISDIR))
    case S_IFIFO: return .notRegular(kind: "a FIFO (named pipe)")
    case S_IFCHR, S_IFBLK: return .notRegular(kind: "a device")
    case S_IFSOCK: return .notRegular(kind: "a socket")
    default: return .notRegular(kind: "a special file")
    }

    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
      let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
      if count < 0 {
        if errno == EINTR { continue }
        return .failed(reason: describe(errno))
      }
      if count == 0 { return .bytes(bytes) }
      bytes += chunk[0..<count]
      if bytes.count > limit { return .tooLarge }
    }
  }

  private static func describe(_ code: Int32) -> String {
    String(cString: strerror(code))
  }
}
