import FoundationEssentials
import Glibc
import GrowBasics
import GrowConfig
import GrowPluginKit

/// Why a plugin library could not be loaded. Each message names the file and what to do.
public enum PluginLoadError: WordedError, Equatable {
  case unsafeFile(path: String, reason: String)
  case cannotOpen(path: String, reason: String)
  case notAGrowPlugin(path: String)
  case incompatibleAPI(path: String, built: UInt32, supported: UInt32)
  case notAPluginType(path: String)
  case wrongID(path: String, expected: String, found: String)

  public var worded: Worded {
    switch self {
    case .unsafeFile(let path, let reason):
      Worded(Message("refusing to load {path}: {reason}"), ["path": path, "reason": reason])
    case .cannotOpen(let path, let reason):
      Worded(Message("cannot load {path}: {reason}"), ["path": path, "reason": reason])
    case .notAGrowPlugin(let path):
      Worded(
        Message("{path} is not a Grow plugin: it has no '{symbol}' entry point"),
        ["path": path, "symbol": GrowPluginAPI.entrySymbol]
      )
    case .incompatibleAPI(let path, let built, let supported):
      Worded(
        Message(
          "{path} was built for Grow plugin API {built}, but this grow provides API "
            + "{supported}; rebuild the plugin against this version of GrowKit"),
        ["path": path, "built": String(built), "supported": String(supported)]
      )
    case .notAPluginType(let path):
      Worded(Message("{path} describes a type that does not conform to GrowPlugin"), ["path": path])
    case .wrongID(let path, let expected, let found):
      Worded(
        Message(
          "{path} should hold plugin '{expected}' but holds '{found}'; rename the file to {file}"),
        [
          "path": path, "expected": expected, "found": found,
          "file": PluginLibrary.fileName(for: found),
        ]
      )
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

  /// `grow-plugin-ID`: an external plugin's program in a user plugin directory, started
  /// without an `exec` line (`PluginHost.discover`).
  static func programName(for id: String) -> String { "grow-plugin-\(id)" }

  /// The plugin id a program file stands for: `grow-plugin-ID`, or with an extension
  /// (`grow-plugin-ID.py`, as `grow plugin new --python` writes it; installed without it).
  static func id(fromProgramName name: String) -> String? {
    let prefix = "grow-plugin-"
    guard name.hasPrefix(prefix) else { return nil }
    let rest = name.dropFirst(prefix.count)
    let id = rest.split(separator: ".", maxSplits: 1).first.map(String.init) ?? ""
    return ConfigSchema.isValidName(id) ? id : nil
  }

  /// `grow_plugin_ID`: the entry point a library may export instead of `grow_plugin`, so that
  /// several plugins can link into one program (the built-in plugins' test binary) without
  /// clashing symbols. Characters a C name cannot hold become `_`.
  static func entrySymbol(for id: String) -> String {
    GrowPluginAPI.entrySymbol + "_"
      + String(id.map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" })
  }

  /// Opens the library at `path` and returns the plugin type it describes: its entry point is
  /// `grow_plugin_ID` if it has one, else `grow_plugin`.
  @MainActor
  static func load(path: String, expectedID: String) throws(PluginLoadError)
    -> any GrowPlugin.Type
  {
    let handle = try open(path)
    guard
      let symbol = dlsym(handle, entrySymbol(for: expectedID))
        ?? dlsym(handle, GrowPluginAPI.entrySymbol)
    else {
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

  /// The descriptors the libraries were loaded from, by file (device and inode), kept open.
  ///
  /// dlopen finds an already loaded library by the name it was given, so a name such as
  /// `/proc/self/fd/7` must never stand for another file: its descriptor stays open as long as
  /// the library is loaded, which is for good. The same file loaded again (a reload) gets the
  /// handle it had, and its new descriptor is closed.
  @MainActor private static var loaded: [String: UnsafeMutableRawPointer] = [:]

  /// Opens the library at `path` once it passed `TrustedFile`'s checks (a library someone
  /// else could have written would run with the user's rights inside the daemon), and loads
  /// exactly the file checked, through its descriptor.
  @MainActor
  private static func open(_ path: String) throws(PluginLoadError) -> UnsafeMutableRawPointer {
    let file: TrustedFile
    do {
      file = try TrustedFile.open(path)
    } catch {
      switch error {
      case .cannotOpen(_, let code):
        throw .cannotOpen(path: path, reason: String(cString: strerror(code)))
      case .unsafe(let reason): throw .unsafeFile(path: path, reason: reason)
      }
    }
    let identity = file.identity
    let key = "\(identity.device):\(identity.inode)"
    if let handle = loaded[key] { return handle }
    let name = "/proc/self/fd/\(file.descriptor)"
    guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE) else {
      let reason = dlerror().map { String(cString: $0) } ?? "unknown error"
      throw .cannotOpen(path: path, reason: reason.replacing(name, with: path))
    }
    _ = file.keepOpen()
    loaded[key] = handle
    return handle
  }
}
