import Foundation
@_spi(GrowHost) import GrowPluginKit
import GrowTestSupport
import Testing

/// The shipped programs import FoundationEssentials only: the full Foundation would load ICU
/// (`lib_FoundationICU`, ~30 MB mapped, ~10 MB resident in the daemon) and cost every
/// `grow status` a few milliseconds of start-up.
@Suite struct ShippedBinariesTests {
  /// The `grow` front links no Swift library at all (FrontTests); grow-cli, which it execs for
  /// every other command, is the one linked against the kit.
  static let shipped =
    ["grow-cli", "libGrowKit.so"] + builtInPluginIDs.map { "libgrow-plugin-\($0).so" }
  static let forbidden = [
    "libFoundation.so", "libFoundationInternationalization.so", "lib_FoundationICU.so",
    "libicu",
  ]

  @Test(arguments: shipped)
  func loadsNeitherFoundationNorICU(file: String) throws {
    let directory = URL(fileURLWithPath: Binaries.grow).deletingLastPathComponent()
    let path = directory.appendingPathComponent(file).path
    #expect(FileManager.default.fileExists(atPath: path), "\(path) is not built")
    // What the file names itself, and everything the loader would bring in with it.
    let needed = try Command.run("readelf", ["-d", path])
    #expect(needed.status == 0, "\(needed.stderr)")
    #expect(needed.stdout.contains("libFoundationEssentials.so"))
    let loaded = try Command.run("ldd", [path])
    #expect(loaded.status == 0, "\(loaded.stderr)")
    for library in Self.forbidden {
      #expect(!needed.stdout.contains(library), "\(file) names \(library)")
      #expect(!loaded.stdout.contains(library), "\(file) loads \(library):\n\(loaded.stdout)")
    }
  }

  /// GLib and GIO (about 2 MB resident) are for the dnd plugin's GNOME backend, which opens
  /// them with dlopen when it runs: neither grow-cli, the kit nor the dnd plugin names them, so
  /// a daemon on another desktop maps them only through a plugin that draws with pango (the
  /// break screen). The `grow` front is static and loads no library at all (FrontTests).
  @Test(arguments: ["grow-cli", "libGrowKit.so", "libgrow-plugin-dnd.so"])
  func namesNoGLib(file: String) throws {
    let directory = URL(fileURLWithPath: Binaries.grow).deletingLastPathComponent()
    let loaded = try Command.run("ldd", [directory.appendingPathComponent(file).path])
    #expect(loaded.status == 0, "\(loaded.stderr)")
    for library in ["libgio-2.0", "libgobject-2.0", "libglib-2.0"] {
      #expect(!loaded.stdout.contains(library), "\(file) loads \(library):\n\(loaded.stdout)")
    }
  }

  /// libcanberra and the PulseAudio client (about 2.4 MB resident) are opened with dlopen at
  /// the first sound (CCanberraLoader): the sound plugin names neither, so the static daemon
  /// image can link it in without mapping them at every start.
  @Test func theSoundPluginNamesNoCanberra() throws {
    let directory = URL(fileURLWithPath: Binaries.grow).deletingLastPathComponent()
    let loaded = try Command.run(
      "ldd", [directory.appendingPathComponent("libgrow-plugin-sound.so").path])
    #expect(loaded.status == 0, "\(loaded.stderr)")
    for library in ["libcanberra", "libpulse"] {
      #expect(!loaded.stdout.contains(library), "the sound plugin loads \(library)")
    }
  }
}
