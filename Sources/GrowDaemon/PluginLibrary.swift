import Foundation
import GrowPluginKit

/// Why a plugin library could not be loaded. Each message names the file and what to do.
public enum PluginLoadError: Error, Equatable, CustomStringConvertible {
  case unsafeFile(path: String, reason: String)
  case cannotOpen(path: String, reason: String)
  case notAGrowPlugin(path: String)
  case incompatibleAPI(path: String, built: UInt32, supported: UInt32)
  case notAPluginType(path: String)
  case wrongID(path: String, expected: String, found: String)

  public var description: String {
    switch self {
    case .unsafeFile(let path, let reason):
      "refusing to load \(path): \(reason)"
    case .cannotOpen(let path, let reason):
      "cannot load \(path): \(reason)"
    case .notAGrowPlugin(let path):
      "\(path) is not a Grow plugin: it has no '\(GrowPluginAPI.entrySymbol)' entry point"
    case .incompatibleAPI(let path, let built, let supported):
      "\(path) was built for Grow plugin API \(built), but this grow provides API "
        + "\(supported); rebuild the plugin against this version of GrowKit"
    case .notAPluginType(let path):
      "\(path) describes a type that does not conform to GrowPlugin"
    case .wrongID(let path, let expected, let found):
      "\(path) should hold plugin '\(expected)' but holds '\(found)'; rename the file to "
        + "\(PluginLibrary.fileName(for: found))"
    }
  }
}

/// Loads plugin libraries with dlopen.
///
/// Libraries are opened with RTLD_NODELETE and never closed: after dlclose the Swift runtime
/// keeps conformance records that point into the unmapped image, and the next dynamic cast
/// crashes.
enum PluginLibrary {
  /// `libgrow-plugin-ID.so`, the name SwiftPM gives the product `grow-plugin-ID`.
  static func fileName(for id: String) -> String { "libgrow-plugin-\(id).so" }

  /// The plugin id a library file stands for, if its name follows the convention.
  static func id(fromFileName name: String) -> String? {
    let prefix = "libgrow-plugin-"
    let suffix = ".so"
    guard name.hasPrefix(prefix), name.hasSuffix(suffix), name.count > prefix.count + suffix.count
    else { return nil }
    return String(name.dropFirst(prefix.count).dropLast(suffix.count))
  }

  /// Opens the library at `path` and returns the plugin type it describes.
  @MainActor
  static func load(path: String, expectedID: String) throws(PluginLoadError)
    -> any GrowPlugin.Type
  {
    try checkOwnership(path)
    guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE) else {
      let reason = dlerror().map { String(cString: $0) } ?? "unknown error"
      throw .cannotOpen(path: path, reason: reason)
    }
    guard let symbol = dlsym(handle, GrowPluginAPI.entrySymbol) else {
      throw .notAGrowPlugin(path: path)
    }
    typealias Entry = @convention(c) () -> UnsafeRawPointer?
    guard let descriptor = unsafeBitCast(symbol, to: Entry.self)() else {
      throw .notAGrowPlugin(path: path)
    }
    // Read the header as plain integers: valid whatever version built the plugin.
    let magic = descriptor.load(as: UInt32.self)
    let version = descriptor.load(fromByteOffset: 4, as: UInt32.self)
    guard magic == GrowPluginAPI.magic else { throw .notAGrowPlugin(path: path) }
    guard version == GrowPluginAPI.version else {
      throw .incompatibleAPI(path: path, built: version, supported: GrowPluginAPI.version)
    }
    let typePointer = descriptor.load(as: GrowPluginDescriptor.self).pluginType
    let anyType = unsafeBitCast(typePointer, to: Any.Type.self)
    guard let pluginType = anyType as? any GrowPlugin.Type else {
      throw .notAPluginType(path: path)
    }
    guard pluginType.id == expectedID else {
      throw .wrongID(path: path, expected: expectedID, found: pluginType.id)
    }
    return pluginType
  }

  /// A library someone else could have written would run with the user's rights inside the
  /// daemon.
  private static func checkOwnership(_ path: String) throws(PluginLoadError) {
    if let problem = TrustedFile.problem(with: path) {
      throw .unsafeFile(path: path, reason: problem)
    }
  }
}
