import FoundationEssentials
import Glibc
@_spi(GrowHost) import GrowCore
import GrowMessages

/// What Syncthing says about the sync folder, asked through its REST API on this machine
/// (the address and API key from its `config.xml`, read only). Grow never changes Syncthing's
/// settings; this only explains what is missing (`grow sync status`, `grow doctor`).
public struct SyncthingReport: Sendable, Equatable, Encodable {
  public enum Finding: String, Sendable, Encodable {
    /// No config.xml where Syncthing keeps one: not installed or never run.
    case notSetUp = "not-set-up"
    /// Its REST API does not answer: Syncthing is not running.
    case notRunning = "not-running"
    /// It runs, but no folder of it holds the sync folder.
    case folderNotShared = "folder-not-shared"
    /// The folder is in Syncthing but shared with no other device.
    case noOtherDevice = "no-other-device"
    /// Shared with other devices.
    case shared
  }

  public var finding: Finding
  /// Where Syncthing's REST API answers (`http://127.0.0.1:8384`), when known.
  public var address: String?
  /// Syncthing's folder id and state (`idle`, `scanning`, `syncing`…), and the files it still
  /// needs from the others.
  public var folderID: String?
  public var state: String?
  public var needFiles: Int?
  public var devices = 0
  public var connectedDevices = 0
  /// Why it could not be asked, in a word or two.
  public var detail: String?

  enum CodingKeys: String, CodingKey {
    case finding, address, state, devices, detail
    case folderID = "folder_id"
    case needFiles = "need_files"
    case connectedDevices = "connected_devices"
  }

  /// One line for people, and what to do when something is missing.
  public var summary: (ok: Bool, text: String, fix: String?) {
    let web = address ?? "http://127.0.0.1:8384"
    switch finding {
    case .notSetUp:
      return (
        false,
        Message("Syncthing has no configuration here (not installed, or never run)").render(),
        Message(
          "install syncthing (apt install syncthing), start it (systemctl --user enable --now "
            + "syncthing), or sync the folder with another tool"
        ).render()
      )
    case .notRunning:
      return (
        false,
        Message("Syncthing does not answer at {address} ({detail})").render([
          "address": web, "detail": detail ?? "no answer",
        ]), Message("start it: systemctl --user enable --now syncthing").render()
      )
    case .folderNotShared:
      return (
        false, Message("Syncthing runs, but no folder of it holds the sync folder").render(),
        Message(
          "add the sync folder in Syncthing ({address}) and share it with your other machines"
        )
        .render(["address": web])
      )
    case .noOtherDevice:
      return (
        false,
        Message("Syncthing's folder '{folder}' is shared with no other device").render([
          "folder": folderID ?? ""
        ]),
        Message("share it with your other machines in Syncthing ({address})").render([
          "address": web
        ])
      )
    case .shared:
      return (
        true,
        // Two counts, so two clauses, each with its own plural.
        Message(
          one: "Syncthing shares folder '{folder}' with {devices} other device, {connected} "
            + "connected now",
          other: "Syncthing shares folder '{folder}' with {devices} other devices, {connected} "
            + "connected now", countedBy: "devices"
        ).render(["folder": folderID ?? "", "devices": devices, "connected": connectedDevices])
          + "; "
          + Message(
            one: "{state}, {need} file to fetch", other: "{state}, {need} files to fetch",
            countedBy: "need"
          ).render(["state": state ?? Message("unknown").render(), "need": needFiles ?? 0]),
        nil
      )
    }
  }
}

/// Asks the local Syncthing about a folder (see `SyncthingReport`).
public enum SyncthingProbe {
  /// Where Syncthing keeps `config.xml`: `$STHOMEDIR`, then the XDG state (1.27 and later)
  /// and config (earlier) directories.
  static func configPaths(environment: [String: String]) -> [String] {
    let directories = XDGDirectories(environment: environment)
    var paths: [String] = []
    if let home = environment["STHOMEDIR"], !home.isEmpty { paths.append(home + "/config.xml") }
    paths.append(directories.stateHome + "/syncthing/config.xml")
    paths.append(directories.configHome + "/syncthing/config.xml")
    return paths
  }

  public static func report(
    folder: String, environment: [String: String] = ProcessInfo.processInfo.environment
  ) -> SyncthingReport {
    var report = SyncthingReport(finding: .notSetUp)
    guard
      let config = configPaths(environment: environment).lazy.compactMap({
        FileManager.default.contents(atPath: $0)
      }).first.map({ String(decoding: $0, as: UTF8.self) })
    else { return report }
    guard let gui = Self.element("gui", in: config), let address = Self.element("address", in: gui)
    else {
      report.finding = .notRunning
      report.detail = "its config.xml has no GUI address"
      return report
    }
    let tls = Self.openingTag("gui", in: config)?.contains("tls=\"true\"") ?? false
    report.address = (tls ? "https://" : "http://") + address
    report.finding = .notRunning
    guard !tls else {
      report.detail = "its GUI is HTTPS only, which Grow does not speak"
      return report
    }
    let key = Self.element("apikey", in: gui) ?? ""
    let client = LoopbackHTTP(address: address, apiKey: key)
    guard let status: SystemStatus = client.get("/rest/system/status", &report.detail) else {
      return report
    }
    guard let folders: [FolderConfig] = client.get("/rest/config/folders", &report.detail) else {
      return report
    }
    let home = PathText.home(environment: environment)
    let target = PathText.normalized(folder)
    let holding = folders.first { candidate in
      var path = candidate.path
      if path == "~" {
        path = home
      } else if path.hasPrefix("~/") {
        path = home + path.dropFirst(1)
      }
      path = PathText.normalized(path)
      return target == path || target.hasPrefix(path.hasSuffix("/") ? path : path + "/")
    }
    guard let holding else {
      report.finding = .folderNotShared
      return report
    }
    report.folderID = holding.id
    let others = holding.devices.map(\.deviceID).filter { $0 != status.myID }
    report.devices = others.count
    guard !others.isEmpty else {
      report.finding = .noOtherDevice
      return report
    }
    report.finding = .shared
    var ignored: String?
    if let connections: Connections = client.get("/rest/system/connections", &ignored) {
      report.connectedDevices =
        others.filter { connections.connections[$0]?.connected == true }
        .count
    }
    // Percent-encoded byte by byte: a folder id may hold any character.
    let escaped = holding.id.utf8.map { byte in
      (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
        || byte == 0x2D
        ? String(UnicodeScalar(byte)) : "%" + String(byte, radix: 16, uppercase: true)
    }.joined()
    if let state: FolderStatus = client.get("/rest/db/status?folder=\(escaped)", &ignored) {
      report.state = state.state
      report.needFiles = state.needFiles
    }
    return report
  }

  struct SystemStatus: Decodable { var myID: String }
  struct FolderConfig: Decodable {
    var id: String
    var path: String
    var devices: [Device]
    struct Device: Decodable { var deviceID: String }
  }
  struct Connections: Decodable {
    var connections: [String: Connection]
    struct Connection: Decodable { var connected: Bool }
  }
  struct FolderStatus: Decodable {
    var state: String
    var needFiles: Int
  }

  /// The text of the first `<name>…</name>` in `xml`.
  static func element(_ name: String, in xml: String) -> String? {
    guard let open = openingTagRange(name, in: xml),
      let close = xml[open.upperBound...].firstRange(of: "</\(name)>")
    else { return nil }
    return String(xml[open.upperBound..<close.lowerBound])
  }

  static func openingTag(_ name: String, in xml: String) -> String? {
    openingTagRange(name, in: xml).map { String(xml[$0]) }
  }

  private static func openingTagRange(_ name: String, in xml: String) -> Range<String.Index>? {
    var search = xml.startIndex..<xml.endIndex
    while let start = xml[search].firstRange(of: "<\(name)") {
      let next = xml[start.upperBound...].first
      if next == ">" || next == " " {
        guard let end = xml[start.upperBound...].firstIndex(of: ">") else { return nil }
        return start.lowerBound..<xml.index(after: end)
      }
      search = start.upperBound..<xml.endIndex
    }
    return nil
  }
}

/// A GET over plain HTTP/1.0 to an address on this machine, with Syncthing's API key: Grow
/// links no HTTP library, and this is all the REST calls need. Bounded: two seconds, 4 MiB.
struct LoopbackHTTP {
  let address: String
  let apiKey: String

  func get<T: Decodable>(_ path: String, _ failure: inout String?) -> T? {
    switch fetch(path) {
    case .success(let body):
      guard let value = try? JSONDecoder().decode(T.self, from: Data(body)) else {
        failure = "an answer Grow does not understand from \(path)"
        return nil
      }
      return value
    case .failure(let reason):
      failure = reason.text
      return nil
    }
  }

  struct Failure: Error {
    var text: String
  }

  func fetch(_ path: String) -> Result<[UInt8], Failure> {
    guard let colon = address.lastIndex(of: ":"),
      let port = UInt16(address[address.index(after: colon)...])
    else { return .failure(Failure(text: "cannot read the address \(address)")) }
    var host = String(address[..<colon])
    if host.hasPrefix("[") { return .failure(Failure(text: "an IPv6 GUI address")) }
    if host.isEmpty || host == "0.0.0.0" || host == "localhost" { host = "127.0.0.1" }
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socket >= 0 else { return .failure(Failure(text: String(cString: strerror(errno)))) }
    defer { close(socket) }
    var timeout = timeval(tv_sec: 2, tv_usec: 0)
    setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var target = sockaddr_in()
    target.sin_family = sa_family_t(AF_INET)
    target.sin_port = port.bigEndian
    guard inet_pton(AF_INET, host, &target.sin_addr) == 1 else {
      return .failure(Failure(text: "not an IPv4 address: \(host)"))
    }
    let connected = withUnsafePointer(to: &target) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard connected == 0 else { return .failure(Failure(text: String(cString: strerror(errno)))) }
    let request = Array(
      "GET \(path) HTTP/1.0\r\nHost: \(address)\r\nX-API-Key: \(apiKey)\r\n\r\n".utf8)
    guard request.withUnsafeBytes({ send(socket, $0.baseAddress, $0.count, 0) }) == request.count
    else { return .failure(Failure(text: String(cString: strerror(errno)))) }
    var response: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 16 << 10)
    while response.count < 4 << 20 {
      let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else {
        if count < 0 { return .failure(Failure(text: String(cString: strerror(errno)))) }
        break
      }
      response += chunk[..<count]
    }
    let separator: [UInt8] = [13, 10, 13, 10]
    guard let end = response.indices.first(where: { response[$0...].starts(with: separator) })
    else {
      return .failure(Failure(text: "no HTTP answer"))
    }
    let head = String(decoding: response[..<end], as: UTF8.self)
    let statusLine = head.prefix { $0 != "\r" }
    guard statusLine.split(separator: " ").dropFirst().first == "200" else {
      return .failure(
        Failure(text: "HTTP \(statusLine.split(separator: " ").dropFirst().joined(separator: " "))")
      )
    }
    return .success(Array(response[(end + 4)...]))
  }
}
