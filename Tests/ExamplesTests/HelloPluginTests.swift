import Foundation
import GrowTestSupport
import Testing

/// examples/hello-plugin: a plugin in a package of its own, built the way its README says
/// and loaded by a running daemon from the user's plugin directory.
@Suite struct HelloPluginTests {
  @Test func theExamplePluginBuildsLoadsAndGreetsAfterFocus() throws {
    let package = RepoPaths.root.appendingPathComponent("examples/hello-plugin").path
    let build = try Command.run(
      "swift", ["build", "--package-path", package], timeout: 900)
    #expect(build.status == 0, "swift build failed:\n\(build.stderr)")

    let harness = try DaemonHarness(
      config: """
        [timer]
        focus = 1s

        [plugins]
        enable = hello

        [plugin.hello]
        greeting = Nice work
        """,
      startDaemon: false)
    try FileManager.default.createDirectory(
      atPath: harness.pluginDirectory, withIntermediateDirectories: true)
    try FileManager.default.copyItem(
      atPath: package + "/.build/debug/libgrow-plugin-hello.so",
      toPath: harness.pluginDirectory + "/libgrow-plugin-hello.so")
    try harness.start()

    let hello = try #require(try harness.plugins()["hello"])
    #expect(hello["source"] == "library")
    #expect(hello["state"] == "running")
    #expect(hello["summary"] == "greets you after every completed focus phase")

    #expect(try harness.grow("start").status == 0)
    let daemon = try #require(harness.daemon)
    let greeted = daemon.waitUntil(timeout: 10) {
      daemon.stderr.contains("grow[hello] info: Nice work! That was focus phase 1 on 'work'.")
    }
    #expect(greeted, "daemon log:\n\(daemon.stderr)")
  }
}
