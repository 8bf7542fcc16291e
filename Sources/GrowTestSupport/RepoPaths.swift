import Foundation

/// Paths inside the Grow checkout, found from this file's location at compile time.
public enum RepoPaths {
  /// The repository root: this file is `<root>/Sources/GrowTestSupport/RepoPaths.swift`.
  public static let root: URL = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent()  // GrowTestSupport
    .deletingLastPathComponent()  // Sources
    .deletingLastPathComponent()

  /// `scripts/`, home of the helper scripts and `dbus-session.conf`.
  public static var scripts: URL { root.appendingPathComponent("scripts") }
}
