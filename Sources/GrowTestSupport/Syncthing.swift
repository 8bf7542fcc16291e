import Foundation

/// A real Syncthing (Debian's 1.19) on 127.0.0.1 only, for the sync tests: its own home made
/// with `syncthing generate`, discovery, relays, NAT, usage reporting and upgrades off, one
/// listening port, and one folder shared with the peers it is introduced to.
public final class SyncthingPeer {
  public let home: URL
  /// The folder it syncs (the Grow sync folder of its machine).
  public let folder: String
  public let deviceID: String
  public let port: Int
  public let guiPort: Int
  public private(set) var process: BackgroundProcess?

  /// - Parameters:
  ///   - directory: where its home goes (`directory/syncthing`).
  ///   - folder: the folder it syncs; made when missing.
  public init(directory: URL, folder: String) throws {
    home = directory.appendingPathComponent("syncthing")
    self.folder = folder
    // Syncthing refuses a folder without its marker (`.stfolder`) as one that went missing.
    try FileManager.default.createDirectory(
      atPath: folder + "/.stfolder", withIntermediateDirectories: true)
    let generated = try Command.run(
      "syncthing", ["generate", "--home=\(home.path)", "--no-default-folder"], timeout: 60)
    guard generated.status == 0 else {
      throw HarnessError("syncthing generate failed: \(generated.stderr)")
    }
    let id = try Command.run("syncthing", ["serve", "--home=\(home.path)", "--device-id"])
    deviceID = id.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    port = try Self.freePort()
    guiPort = try Self.freePort()
    var config = try String(contentsOf: configURL, encoding: .utf8)
    let options = [
      "globalAnnounceEnabled": "false", "localAnnounceEnabled": "false",
      "relaysEnabled": "false", "natEnabled": "false", "urAccepted": "-1",
      "crashReportingEnabled": "false", "autoUpgradeIntervalH": "0", "startBrowser": "false",
      "listenAddress": "tcp://127.0.0.1:\(port)",
    ]
    for (key, value) in options {
      config = config.replacingOccurrences(
        of: "<\(key)>[^<]*</\(key)>", with: "<\(key)>\(value)</\(key)>",
        options: .regularExpression)
    }
    config = config.replacingOccurrences(
      of: "<address>127.0.0.1:8384</address>", with: "<address>127.0.0.1:\(guiPort)</address>")
    try config.write(to: configURL, atomically: true, encoding: .utf8)
  }

  deinit { process?.kill() }

  var configURL: URL { home.appendingPathComponent("config.xml") }

  /// The GUI's API key (`<gui><apikey>`).
  public var apiKey: String {
    let config = (try? String(contentsOf: configURL, encoding: .utf8)) ?? ""
    guard let start = config.range(of: "<apikey>"), let end = config.range(of: "</apikey>")
    else { return "" }
    return String(config[start.upperBound..<end.lowerBound])
  }

  /// Shares the folder (id `grow`) with `peers`, each reached at its loopback port. Call
  /// before `start`.
  public func share(with peers: [SyncthingPeer]) throws {
    var config = try String(contentsOf: configURL, encoding: .utf8)
    var added = ""
    for peer in peers {
      added += """
            <device id="\(peer.deviceID)" name="\(peer.deviceID.prefix(7))" compression="metadata">
                <address>tcp://127.0.0.1:\(peer.port)</address>
            </device>

        """
    }
    let devices = ([self] + peers).map { "        <device id=\"\($0.deviceID)\"></device>\n" }
      .joined()
    added += """
          <folder id="grow" label="grow" path="\(folder)" type="sendreceive" rescanIntervalS="60" fsWatcherEnabled="true" fsWatcherDelayS="1">
      \(devices)    </folder>

      """
    guard
      let opening = config.range(
        of: "<configuration version=\"[0-9]+\">\n", options: .regularExpression)
    else { throw HarnessError("no <configuration> in \(configURL.path)") }
    config.insert(contentsOf: added, at: opening.upperBound)
    try config.write(to: configURL, atomically: true, encoding: .utf8)
  }

  /// Starts `syncthing serve` and waits until its REST API answers.
  public func start() throws {
    let process = try BackgroundProcess(
      "syncthing",
      ["serve", "--home=\(home.path)", "--no-browser", "--no-restart", "--no-upgrade"],
      environment: ["STNODEFAULTFOLDER": "1", "STNOUPGRADE": "1"])
    self.process = process
    let up = process.waitUntil(timeout: 60, interval: 0.1) {
      (try? rest("/rest/system/ping"))?.contains("pong") == true
    }
    guard up else { throw HarnessError("syncthing did not start: \(process.stderr)") }
  }

  public func stop() {
    _ = process?.terminate(timeout: 10) ?? process?.kill()
    process = nil
  }

  /// A GET of its REST API, with the API key.
  public func rest(_ path: String) throws -> String {
    try Command.run(
      "curl",
      ["-sf", "-m", "5", "-H", "X-API-Key: \(apiKey)", "http://127.0.0.1:\(guiPort)\(path)"],
      timeout: 10
    ).stdout
  }

  /// A port nothing listens on now (bound and let go: another program could take it between,
  /// which on a test machine does not happen in practice).
  static func freePort() throws -> Int {
    let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socket >= 0 else { throw HarnessError("socket: \(errno)") }
    defer { close(socket) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
        bind(socket, pointer, length) == 0 && getsockname(socket, pointer, &length) == 0
      }
    }
    guard bound else { throw HarnessError("bind: \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
  }
}
