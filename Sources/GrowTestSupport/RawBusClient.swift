import Foundation
import Glibc

/// A D-Bus client written by hand, for the calls libdbus refuses to make: strings that are
/// not UTF-8, or of any size. It speaks just enough of the wire protocol (little-endian) to
/// authenticate, say Hello and send method calls, one at a time or pipelined; see the D-Bus
/// specification, "Message Protocol".
public final class RawBusClient {
  public enum Failure: Error, CustomStringConvertible {
    case address(String)
    case system(String, Int32)
    case protocolError(String)
    case noReply(after: TimeInterval)

    public var description: String {
      switch self {
      case .address(let address): "cannot use bus address '\(address)'"
      case .system(let call, let code): "\(call): \(String(cString: strerror(code)))"
      case .protocolError(let what): "unexpected from the bus: \(what)"
      case .noReply(let timeout): "no answer within \(Int(timeout)) s"
      }
    }
  }

  /// What came back for a call.
  public enum Outcome: Equatable {
    case returned
    case error(name: String, message: String)
    /// The bus closed the connection instead of answering (it does so for invalid messages).
    case disconnected
  }

  private let socket: Int32
  private let timeout: TimeInterval
  private var serial: UInt32 = 0

  /// Connects to a `unix:path=…` or `unix:abstract=…` address, authenticates as this user
  /// (`AUTH EXTERNAL` with the uid in hex-encoded ASCII) and says Hello.
  public init(address: String, timeout: TimeInterval = 10) throws {
    let parts = address.split(separator: ";").first.map { $0.split(separator: ",") } ?? []
    var socketAddress = sockaddr_un()
    socketAddress.sun_family = sa_family_t(AF_UNIX)
    var name: [UInt8]
    if let path = parts.first(where: { $0.hasPrefix("unix:path=") }) {
      name = Array(path.dropFirst("unix:path=".count).utf8)
    } else if let abstract = parts.first(where: { $0.hasPrefix("unix:abstract=") }) {
      name = [0] + Array(abstract.dropFirst("unix:abstract=".count).utf8)
    } else {
      throw Failure.address(address)
    }
    guard name.count < MemoryLayout.size(ofValue: socketAddress.sun_path) else {
      throw Failure.address(address)
    }
    withUnsafeMutableBytes(of: &socketAddress.sun_path) { $0.copyBytes(from: name) }
    self.timeout = timeout
    socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard socket >= 0 else { throw Failure.system("socket", errno) }
    // Fractions count: the soak's latency probe waits one second or less.
    let whole = timeout.rounded(.down)
    var wait = timeval(tv_sec: Int(whole), tv_usec: Int((timeout - whole) * 1_000_000))
    setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
    let length = socklen_t(MemoryLayout<sa_family_t>.size + name.count)
    let connected = withUnsafePointer(to: &socketAddress) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, length) }
    }
    guard connected == 0 else {
      let code = errno
      close(socket)
      throw Failure.system("connect", code)
    }
    let uid = Array(String(getuid()).utf8).map { String(format: "%02x", $0) }.joined()
    try write([0] + Array("AUTH EXTERNAL \(uid)\r\n".utf8))
    let answer = try readLine()
    guard answer.hasPrefix("OK ") else { throw Failure.protocolError("auth answer '\(answer)'") }
    try write(Array("BEGIN\r\n".utf8))
    let hello = try call(
      path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "Hello",
      destination: "org.freedesktop.DBus")
    guard hello == .returned else { throw Failure.protocolError("Hello answered \(hello)") }
  }

  deinit { close(socket) }

  /// One method call: where it goes and its body (already marshalled, of type `signature`).
  public struct MethodCall: Sendable {
    public var path: String
    public var interface: String
    public var member: String
    public var destination: String
    public var signature: String
    public var body: WireWriter

    public init(
      path: String, interface: String, member: String, destination: String,
      signature: String = "", body: WireWriter = WireWriter()
    ) {
      self.path = path
      self.interface = interface
      self.member = member
      self.destination = destination
      self.signature = signature
      self.body = body
    }

    /// A call of Grow's timer interface (`Toggle`, `Extend` with `seconds`, `GetStatus` …).
    public static func timer(_ member: String, seconds: UInt32? = nil) -> MethodCall {
      var body = WireWriter()
      if let seconds { body.uint32(seconds) }
      return MethodCall(
        path: "/org/grow/Grow1", interface: "org.grow.Grow1.Timer", member: member,
        destination: "org.grow.Grow1", signature: seconds == nil ? "" : "u", body: body)
    }
  }

  /// Sends a method call whose body is `body` (already marshalled, of type `signature`) and
  /// waits for its reply; signals and other messages in between are skipped.
  public func call(
    path: String, interface: String, member: String, destination: String,
    signature: String = "", body: WireWriter = WireWriter()
  ) throws -> Outcome {
    let call = MethodCall(
      path: path, interface: interface, member: member, destination: destination,
      signature: signature, body: body)
    return try pipeline([call])[0]
  }

  /// Sends every call before reading any reply, as a client that pipelines does, then waits
  /// for all the replies; the outcomes are in the order of `calls`.
  public func pipeline(_ calls: [MethodCall]) throws -> [Outcome] {
    let serials: [UInt32]
    do {
      serials = try send(calls)
    } catch Failure.system(_, EPIPE), Failure.system(_, ECONNRESET) {
      return calls.map { _ in .disconnected }
    }
    var outcomes: [UInt32: Outcome] = [:]
    let wanted = Set(serials)
    while outcomes.count < serials.count {
      guard let message = try readMessage() else { break }
      guard let reply = message.replySerial, wanted.contains(reply) else { continue }
      outcomes[reply] =
        message.errorName.map { .error(name: $0, message: message.firstString ?? "") }
        ?? .returned
    }
    return serials.map { outcomes[$0] ?? .disconnected }
  }

  /// Sends every call without waiting for any reply (read them with `receive`); their
  /// serials, in the order of `calls`.
  public func send(_ calls: [MethodCall]) throws -> [UInt32] {
    var bytes: [UInt8] = []
    var serials: [UInt32] = []
    for call in calls {
      serial += 1
      serials.append(serial)
      bytes += message(call, serial: serial)
    }
    try write(bytes)
    return serials
  }

  /// Asks the bus for the signals matching `rule` (AddMatch), waiting for its answer.
  public func addMatch(_ rule: String) throws {
    var body = WireWriter()
    body.string(Array(rule.utf8))
    let outcome = try call(
      path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "AddMatch",
      destination: "org.freedesktop.DBus", signature: "s", body: body)
    guard outcome == .returned else { throw Failure.protocolError("AddMatch answered \(outcome)") }
  }

  /// The next message from the bus, whatever it is (a reply, an error, a signal), or nil once
  /// the bus closed the connection.
  public func receive() throws -> Received? { try readMessage() }

  private func message(_ call: MethodCall, serial: UInt32) -> [UInt8] {
    var header = WireWriter()
    header.bytes = [UInt8(ascii: "l"), 1, 0, 1]  // little-endian, METHOD_CALL, no flags, v1
    header.uint32(UInt32(call.body.bytes.count))
    header.uint32(serial)
    header.array(alignment: 8) { fields in
      let strings: [(UInt8, String, String)] = [
        (1, "o", call.path), (2, "s", call.interface), (3, "s", call.member),
        (6, "s", call.destination),
      ]
      for (code, type, value) in strings {
        fields.align(8)
        fields.bytes.append(code)
        fields.signature(type)
        fields.string(Array(value.utf8))
      }
      if !call.signature.isEmpty {
        fields.align(8)
        fields.bytes.append(8)
        fields.signature("g")
        fields.signature(call.signature)
      }
    }
    header.align(8)
    return header.bytes + call.body.bytes
  }

  // MARK: Reading

  /// A message as received: what the tests look at.
  public struct Received {
    /// For a reply or an error: the serial of the call it answers.
    public var replySerial: UInt32?
    public var errorName: String?
    /// For a signal: its name.
    public var member: String?
    public var firstString: String?
    public var bodySignature = ""
    /// The body's bytes (a body starts 8-aligned in the message).
    public var body: [UInt8] = []

    /// The `u` values of the body's `a{sv}` (GetStatus's reply, PropertiesChanged's changed
    /// properties), by name. Values of other basic types are skipped; decoding stops at a
    /// container value.
    public var uint32Entries: [String: UInt32] {
      var reader = WireReader(body)
      switch bodySignature {
      case "a{sv}": break
      case "sa{sv}as": _ = reader.string()
      default: return [:]
      }
      var entries: [String: UInt32] = [:]
      let length = Int(reader.uint32())
      reader.align(8)
      let end = reader.offset + length
      while reader.offset < end {
        reader.align(8)
        let key = reader.string()
        let type = reader.signature()
        switch type {
        case "u": entries[key] = reader.uint32()
        case "i", "b": _ = reader.uint32()
        case "s", "o": _ = reader.string()
        case "g": _ = reader.signature()
        case "y": _ = reader.byte()
        case "n", "q":
          reader.align(2)
          reader.offset += 2
        case "x", "t", "d":
          reader.align(8)
          reader.offset += 8
        default: return entries
        }
      }
      return entries
    }
  }

  private typealias Message = Received

  /// The next whole message, or nil once the bus has closed the connection.
  private func readMessage() throws -> Message? {
    guard let fixed = try read(16) else { return nil }
    guard fixed[0] == UInt8(ascii: "l") else { throw Failure.protocolError("big-endian message") }
    let bodyLength = Int(WireReader(fixed).uint32(at: 4))
    let fieldsLength = Int(WireReader(fixed).uint32(at: 12))
    let headerLength = (16 + fieldsLength + 7) / 8 * 8
    guard let rest = try read(headerLength - 16 + bodyLength) else { return nil }
    var reader = WireReader(fixed + rest)
    var message = Message()
    var bodySignature = ""
    reader.offset = 16
    while reader.offset < 16 + fieldsLength {
      reader.align(8)
      let code = reader.byte()
      let type = reader.signature()
      switch (code, type) {
      case (4, "s"): message.errorName = reader.string()  // ERROR_NAME
      case (3, "s"): message.member = reader.string()  // MEMBER
      case (5, "u"): message.replySerial = reader.uint32()  // REPLY_SERIAL
      case (8, "g"): bodySignature = reader.signature()  // SIGNATURE
      case (_, "s"), (_, "o"): _ = reader.string()
      case (_, "g"): _ = reader.signature()
      case (_, "u"): _ = reader.uint32()
      default: throw Failure.protocolError("header field of type '\(type)'")
      }
    }
    message.bodySignature = bodySignature
    message.body = Array(reader.bytes[headerLength...])
    if bodySignature.hasPrefix("s") {
      reader.offset = headerLength
      message.firstString = reader.string()
    }
    return message
  }

  /// A line of the authentication conversation, without its CR LF.
  private func readLine() throws -> String {
    var line: [UInt8] = []
    while Array(line.suffix(2)) != [13, 10] {
      guard let byte = try read(1) else { throw Failure.protocolError("closed during auth") }
      line += byte
    }
    return String(decoding: line.dropLast(2), as: UTF8.self)
  }

  /// Exactly `count` bytes, or nil at end of stream.
  private func read(_ count: Int) throws -> [UInt8]? {
    var bytes = [UInt8](repeating: 0, count: count)
    var done = 0
    while done < count {
      let got = bytes.withUnsafeMutableBytes { buffer in
        recv(socket, buffer.baseAddress.map { $0 + done }, count - done, 0)
      }
      if got == 0 { return nil }
      if got < 0 {
        if errno == EINTR { continue }
        if errno == ECONNRESET { return nil }
        if errno == EAGAIN { throw Failure.noReply(after: timeout) }
        throw Failure.system("recv", errno)
      }
      done += got
    }
    return bytes
  }

  private func write(_ bytes: [UInt8]) throws {
    var done = 0
    while done < bytes.count {
      let sent = bytes.withUnsafeBytes { buffer in
        Glibc.send(
          socket, buffer.baseAddress.map { $0 + done }, bytes.count - done, Int32(MSG_NOSIGNAL))
      }
      if sent < 0 {
        if errno == EINTR { continue }
        throw Failure.system("send", errno)
      }
      done += sent
    }
  }
}

/// Marshals values the D-Bus way: each aligned to its size from the start of the message
/// (a body starts 8-aligned, so counting from the start of the body is the same).
public struct WireWriter: Sendable {
  public var bytes: [UInt8] = []

  public init() {}

  public mutating func align(_ boundary: Int) {
    while bytes.count % boundary != 0 { bytes.append(0) }
  }

  public mutating func uint32(_ value: UInt32) {
    align(4)
    withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
  }

  /// A string (`s`) of any bytes, valid UTF-8 or not: length, bytes, NUL.
  public mutating func string(_ utf8: [UInt8]) {
    uint32(UInt32(utf8.count))
    bytes += utf8 + [0]
  }

  /// A signature (`g`): one length byte, the type codes, NUL.
  public mutating func signature(_ text: String) {
    bytes += [UInt8(text.utf8.count)] + Array(text.utf8) + [0]
  }

  /// An array whose elements `elements` writes, each aligned to `alignment`.
  public mutating func array(alignment: Int, _ elements: (inout WireWriter) -> Void) {
    uint32(0)
    let lengthAt = bytes.count - 4
    align(alignment)
    let start = bytes.count
    elements(&self)
    let length = UInt32(bytes.count - start).littleEndian
    withUnsafeBytes(of: length) { bytes.replaceSubrange(lengthAt..<lengthAt + 4, with: $0) }
  }

  /// An `a{sv}` of string and uint32 values, such as StartWith's options.
  public mutating func vardict(_ entries: [(String, StartOption)]) {
    array(alignment: 8) { writer in
      for (key, value) in entries {
        writer.align(8)
        writer.string(Array(key.utf8))
        switch value {
        case .string(let text):
          writer.signature("s")
          writer.string(text)
        case .uint32(let number):
          writer.signature("u")
          writer.uint32(number)
        }
      }
    }
  }

  public enum StartOption: Sendable {
    case string([UInt8])
    case uint32(UInt32)
  }
}

/// Reads what `WireWriter` writes, from a whole message.
private struct WireReader {
  let bytes: [UInt8]
  var offset = 0

  init(_ bytes: [UInt8]) { self.bytes = bytes }

  mutating func align(_ boundary: Int) { offset = (offset + boundary - 1) / boundary * boundary }

  func uint32(at position: Int) -> UInt32 {
    bytes[position..<position + 4].reversed().reduce(0) { $0 << 8 | UInt32($1) }
  }

  mutating func byte() -> UInt8 {
    defer { offset += 1 }
    return bytes[offset]
  }

  mutating func uint32() -> UInt32 {
    align(4)
    defer { offset += 4 }
    return uint32(at: offset)
  }

  mutating func string() -> String {
    let length = Int(uint32())
    defer { offset += length + 1 }
    return String(decoding: bytes[offset..<offset + length], as: UTF8.self)
  }

  mutating func signature() -> String {
    let length = Int(byte())
    defer { offset += length + 1 }
    return String(decoding: bytes[offset..<offset + length], as: UTF8.self)
  }
}
