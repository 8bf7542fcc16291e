import Foundation
@_spi(GrowBuiltIn) import GrowConfig
import Testing

/// What Grow reads from a mako config: the do-not-disturb mode it switches, and whether that
/// mode still shows critical notifications. Criteria in a section header come in any order.
@Suite struct MakoConfigTests {
  @Test func theModeWithInvisibleHidesNotifications() {
    let config = MakoConfig(path: "c", text: "font=Sans 10\n\n[mode=do-not-disturb]\ninvisible=1\n")
    #expect(config.modeHidesNotifications)
    #expect(!config.modeShowsCritical)
  }

  @Test(arguments: [
    "[mode=do-not-disturb]\nborder-size=4\n",
    "[mode=do-not-disturb]\ninvisible=0\n",
    "# [mode=do-not-disturb]\n# invisible=1\n",
    "invisible=1\n[mode=away]\ninvisible=1\n",
    "[mode=do-not-disturb app-name=foo]\ninvisible=1\n",
  ])
  func otherwiseTheModeHidesNothing(text: String) {
    #expect(!MakoConfig(path: "c", text: text).modeHidesNotifications)
  }

  @Test(arguments: ["urgency=critical mode=do-not-disturb", "mode=do-not-disturb urgency=critical"])
  func aCriticalSectionWithInvisibleZeroShowsCriticalOnes(criteria: String) {
    let config = MakoConfig(
      path: "c", text: "[mode=do-not-disturb]\ninvisible=true\n\n[\(criteria)]\ninvisible=0\n")
    #expect(config.modeHidesNotifications)
    #expect(config.modeShowsCritical)
  }

  /// The file mako 1.7 reads: XDG_CONFIG_HOME's first, then ~/.mako/config; none at all is
  /// mako's defaults, which have no such mode.
  @Test func theFileIsFoundWhereMakoLooks() throws {
    let home = FileManager.default.temporaryDirectory.appendingPathComponent(
      "grow-mako-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: home) }
    let environment = ["HOME": home.path, "XDG_CONFIG_HOME": home.path + "/xdg"]
    #expect(MakoConfig(environment: environment).path == nil)
    try FileManager.default.createDirectory(
      at: home.appendingPathComponent(".mako"), withIntermediateDirectories: true)
    try "[mode=do-not-disturb]\ninvisible=1\n".write(
      to: home.appendingPathComponent(".mako/config"), atomically: true, encoding: .utf8)
    #expect(MakoConfig(environment: environment).path == home.path + "/.mako/config")
    #expect(MakoConfig(environment: environment).modeHidesNotifications)
    try FileManager.default.createDirectory(
      at: home.appendingPathComponent("xdg/mako"), withIntermediateDirectories: true)
    try "default-timeout=0\n".write(
      to: home.appendingPathComponent("xdg/mako/config"), atomically: true, encoding: .utf8)
    #expect(MakoConfig(environment: environment).path == home.path + "/xdg/mako/config")
    #expect(!MakoConfig(environment: environment).modeHidesNotifications)
  }
}
