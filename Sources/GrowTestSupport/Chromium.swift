import Foundation

/// Chromium from Debian, headless, with Grow's extension (browser/) loaded unpacked and its
/// native messaging host (`grow browser-host`) where this profile looks for it, talking to a
/// harness's bus; pages come from a local HTTP server under made-up host names
/// (`--host-resolver-rules`), since nothing here reaches the network.
/// The DevTools protocol opens pages, lists them and runs script in them (scripts/cdp).
public final class Chromium {
  public let profile: URL
  private let browser: BackgroundProcess
  private let server: BackgroundProcess
  /// The DevTools port Chromium chose (`--remote-debugging-port=0`).
  public let devToolsPort: Int
  /// The local HTTP server's port; every made-up host name leads there.
  public let serverPort: Int
  /// The extension's id, fixed by the key in browser/manifest.json.
  public static let extensionID = "mikjebhnojnjhnhbjncinbcgejfbcinb"
  public static var extensionOrigin: String { "chrome-extension://\(extensionID)" }

  public static var isInstalled: Bool {
    (try? Command.resolve("chromium", in: ProcessInfo.processInfo.environment)) != nil
  }

  /// - Parameters:
  ///   - hosts: made-up names that lead to the local server (`video.test`).
  ///   - pages: files the server serves, by path (`index.html`).
  ///   - hostEnvironment: what `grow browser-host` runs with (the harness's bus and XDG dirs).
  ///   - language: the browser's language (`de`, `pt_BR`); on Linux Chromium takes it from
  ///     `LANGUAGE` and `LANG`, not from `--lang`. nil: English.
  public init(
    hosts: [String], pages: [String: String], hostEnvironment: [String: String],
    language: String? = nil
  ) throws {
    profile = FileManager.default.temporaryDirectory
      .appendingPathComponent("grow-chromium-\(UUID().uuidString)")
    let site = profile.appendingPathComponent("site")
    try FileManager.default.createDirectory(at: site, withIntermediateDirectories: true)
    for (path, text) in pages {
      let file = site.appendingPathComponent(path)
      try FileManager.default.createDirectory(
        at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
      try text.write(to: file, atomically: true, encoding: .utf8)
    }
    // Port 0: the kernel picks a free one, and the server says which.
    let server = try BackgroundProcess(
      "python3",
      [
        "-u", "-c",
        "import http.server,functools,sys;"
          + "h=functools.partial(http.server.SimpleHTTPRequestHandler,directory=sys.argv[1]);"
          + "s=http.server.ThreadingHTTPServer(('127.0.0.1',0),h);"
          + "print(s.server_address[1],flush=True);s.serve_forever()",
        site.path,
      ])
    var port: Int?
    _ = try server.waitUntil(timeout: 30) {
      port = Int(server.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
      return port != nil
    }
    guard let port else { throw HarnessError("the HTTP server did not start: \(server.stderr)") }
    self.server = server
    serverPort = port

    // The host, as `grow install --user --browser` writes it, but in this profile's own
    // NativeMessagingHosts (Chromium reads it from the user data directory too) and with the
    // harness's environment: the browser's own is the test process's.
    let manifests = profile.appendingPathComponent("NativeMessagingHosts")
    try FileManager.default.createDirectory(at: manifests, withIntermediateDirectories: true)
    let script = profile.appendingPathComponent("browser-host")
    let exports = hostEnvironment.sorted { $0.key < $1.key }.map {
      "export \($0.key)='\($0.value)'"
    }
    try (["#!/bin/sh"] + exports + ["exec '\(Binaries.grow)' browser-host \"$@\""])
      .joined(separator: "\n").write(to: script, atomically: true, encoding: .utf8)
    try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
    let manifest: [String: Any] = [
      "name": "org.grow.grow", "description": "Grow (test)", "path": script.path,
      "type": "stdio", "allowed_origins": ["\(Self.extensionOrigin)/"],
    ]
    try JSONSerialization.data(withJSONObject: manifest).write(
      to: manifests.appendingPathComponent("org.grow.grow.json"))

    let extensionFolder = RepoPaths.root.appendingPathComponent("browser").path
    let rules = hosts.map { "MAP \($0) 127.0.0.1:\(port)" }.joined(separator: ", ")
    let browser = try BackgroundProcess(
      "chromium",
      [
        "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--user-data-dir=\(profile.path)", "--load-extension=\(extensionFolder)",
        "--disable-extensions-except=\(extensionFolder)", "--remote-debugging-port=0",
        "--host-resolver-rules=\(rules)",
      ] + (language.map { ["--lang=\($0.replacingOccurrences(of: "_", with: "-"))"] } ?? [])
        + ["about:blank"],
      environment: language.map { language in
        let region = language.contains("_") ? language : "\(language)_\(language.uppercased())"
        return ["LANGUAGE": language, "LANG": "\(region).UTF-8"]
      } ?? [:])
    let portFile = profile.appendingPathComponent("DevToolsActivePort")
    var devTools: Int?
    _ = try browser.waitUntil(timeout: 60) {
      let text = (try? String(contentsOf: portFile, encoding: .utf8)) ?? ""
      devTools = text.split(separator: "\n").first.flatMap { Int($0) }
      return devTools != nil
    }
    guard let devTools else {
      throw HarnessError("Chromium did not start its DevTools: \(browser.stderr.suffix(2000))")
    }
    self.browser = browser
    devToolsPort = devTools
  }

  deinit {
    // SIGTERM first: Chromium then takes its renderers and the host down with it.
    if browser.terminate(timeout: 10) == nil { browser.kill() }
    server.kill()
    try? FileManager.default.removeItem(at: profile)
  }

  /// Whether Chromium is still running (it may crash under a hostile test).
  public var isRunning: Bool { browser.exitStatus == nil }

  /// The browser's own messages (the extension's errors show here).
  public var log: String { browser.stderr }

  /// Opens `url` in a new tab, which becomes the active one.
  @discardableResult
  public func open(_ url: String) throws -> String {
    try devTools("new?\(url)", method: "PUT")
  }

  /// The address of every page (tab), newest first.
  public func pages() throws -> [String] {
    let data = Data(try devTools("list").utf8)
    let targets = try JSONSerialization.jsonObject(with: data) as? [[String: Any]] ?? []
    return targets.filter { $0["type"] as? String == "page" }.compactMap { $0["url"] as? String }
  }

  /// Runs `expression` in the first page whose address starts with `prefix`; its value: a
  /// string as itself, anything else as JSON text.
  public func evaluate(_ expression: String, inPageStartingWith prefix: String) throws -> String {
    let result = try Command.run(
      RepoPaths.scripts.appendingPathComponent("cdp").path,
      ["\(devToolsPort)", prefix, expression], timeout: 30)
    guard result.status == 0 else { throw HarnessError("scripts/cdp: \(result.stderr)") }
    let text = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    let value = try? JSONSerialization.jsonObject(
      with: Data(text.utf8), options: .fragmentsAllowed)
    return value as? String ?? text
  }

  /// Saves a PNG of the first page whose address starts with `prefix` (for docs and for
  /// looking at what a test saw).
  public func screenshot(ofPageStartingWith prefix: String, to path: String) throws {
    let result = try Command.run(
      RepoPaths.scripts.appendingPathComponent("cdp").path,
      ["\(devToolsPort)", prefix, "--screenshot=\(path)"], timeout: 30)
    guard result.status == 0 else { throw HarnessError("scripts/cdp: \(result.stderr)") }
  }

  /// Waits until `condition` holds for the pages' addresses; false after `timeout`.
  public func waitForPages(timeout: TimeInterval = 30, _ condition: ([String]) -> Bool) throws
    -> Bool
  {
    try browser.waitUntil(timeout: timeout, interval: 0.2) { condition(try pages()) }
  }

  /// Waits, while the browser runs, until `condition` holds; false after `timeout`.
  @discardableResult
  public func waitUntil(timeout: TimeInterval = 30, _ condition: () throws -> Bool) rethrows
    -> Bool
  {
    try browser.waitUntil(timeout: timeout, interval: 0.2, condition)
  }

  private func devTools(_ path: String, method: String = "GET") throws -> String {
    let result = try Command.run(
      "curl", ["-s", "-f", "-X", method, "http://127.0.0.1:\(devToolsPort)/json/\(path)"],
      timeout: 30)
    guard result.status == 0 else {
      throw HarnessError("DevTools /json/\(path) failed: \(result.stderr)")
    }
    return result.stdout
  }
}
