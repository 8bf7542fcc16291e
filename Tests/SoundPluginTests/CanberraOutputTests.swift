import Foundation
import GrowPluginTesting
import Testing

@testable import SoundPlugin

/// The libcanberra wrapper's own resources: each output a reload makes and drops leaves no
/// descriptor behind (no sound is played, so no sound server is needed).
@MainActor
@Suite struct CanberraOutputTests {
  static func openDescriptors() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
  }

  @Test func droppedOutputsCloseTheirPipes() throws {
    let loop = ManualLoop()
    let before = Self.openDescriptors()
    for _ in 0..<20 {
      _ = try CanberraOutput(loop: loop, applicationName: "grow-test")
    }
    // Each worker thread ends after its output is dropped; the pipes close with it.
    let deadline = Date().addingTimeInterval(30)
    while Self.openDescriptors() > before + 2, Date() < deadline {
      usleep(10_000)
    }
    #expect(Self.openDescriptors() <= before + 2, "20 outputs made and dropped")
  }
}
