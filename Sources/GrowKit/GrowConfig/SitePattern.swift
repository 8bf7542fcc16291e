import FoundationEssentials
@_spi(GrowHost) import GrowCore

/// `site:youtube.com`, `site:*.reddit.com` or `site:youtube.com/shorts` in `distractions =`
/// or `allow =`: a website, as the browser extension reports the active tab (browser/).
///
/// A host names itself and every subdomain (`youtube.com` is also `www.youtube.com` and
/// `m.youtube.com`, as LeechBlock and the browsers' own site lists read a domain); `*.` in
/// front says the same explicitly. A path, when given, is a prefix of the page's path and
/// query (`youtube.com/watch?v=abc`). Letters are compared ignoring case, the path exactly.
///
/// The browser blocks with `declarativeNetRequest` rules built from `host` and `path`
/// (browser/rules.js), which mean the same: `requestDomains` for a host, `||host/path` for a
/// path. `SitePatternTests` and the Chromium test hold the two to one meaning. The browser
/// plugin's (`@_spi(GrowBuiltIn)`): what it decides is product policy, not plugin API.
@_spi(GrowBuiltIn) public struct SitePattern: Sendable, Equatable, CustomStringConvertible {
  /// Lower-case, without `*.`, a port or a scheme.
  public let host: String
  /// Empty, or starting with `/`.
  public let path: String

  public static let prefix = "site:"

  /// Parses what follows `site:`; nil when it is not a host (spaces, a scheme, nothing).
  public init?(_ text: some StringProtocol) {
    var rest = Substring(String(text).trimmingWhitespace())
    for scheme in ["https://", "http://"] where rest.lowercased().hasPrefix(scheme) {
      rest = rest.dropFirst(scheme.count)
    }
    if rest.hasPrefix("*.") { rest = rest.dropFirst(2) }
    let slash = rest.firstIndex(of: "/") ?? rest.endIndex
    let host = rest[..<slash].lowercased()
    guard !host.isEmpty, host.count <= 253,
      host.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" }),
      !host.hasPrefix("."), !host.hasSuffix("."), !host.contains("..")
    else { return nil }
    self.host = host
    path = String(rest[slash...])
    guard !path.contains(where: { $0.isWhitespace }) else { return nil }
  }

  /// `youtube.com` or `youtube.com/shorts`, as written in the config (less `site:`).
  public var description: String { host + path }

  /// Whether a page on `host` at `path` (its path and query, from `/`) is this site.
  public func matches(host pageHost: String, path pagePath: String) -> Bool {
    let pageHost = pageHost.lowercased()
    guard pageHost == host || pageHost.hasSuffix("." + host) else { return false }
    return path.isEmpty || pagePath.hasPrefix(path)
  }
}

/// A page's address, split as `SitePattern` needs it: the host and what follows it. Only
/// http and https pages are sites; the browser's own pages (`chrome://`, the new-tab page,
/// Grow's blocked page) are none.
@_spi(GrowBuiltIn) public struct PageAddress: Sendable, Equatable {
  public let host: String
  /// The path and query, from `/`; `/` when the address has none.
  public let path: String

  public init?(_ url: String) {
    let lowered = url.prefix(8).lowercased()
    let scheme = lowered.hasPrefix("https://") ? 8 : lowered.hasPrefix("http://") ? 7 : 0
    guard scheme > 0 else { return nil }
    let rest = url.dropFirst(scheme)
    let end = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
    var authority = rest[..<end]
    if let at = authority.lastIndex(of: "@") {
      authority = authority[authority.index(after: at)...]
    }
    if let colon = authority.lastIndex(of: ":") { authority = authority[..<colon] }
    guard !authority.isEmpty else { return nil }
    host = authority.lowercased()
    var path = rest[end...]
    if let hash = path.firstIndex(of: "#") { path = path[..<hash] }
    self.path = path.hasPrefix("/") ? String(path) : "/" + path
  }
}
