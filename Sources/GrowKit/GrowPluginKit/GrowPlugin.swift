import GrowConfig
import GrowCore

/// A Grow plugin: one type, loaded by the daemon at start from its own shared library.
///
/// A plugin reacts to the timer's typed events, may publish its own, and may drive the timer.
/// Everything happens on the daemon's event loop (the main actor), so a plugin needs no
/// locks: handlers run one at a time, never concurrently with each other or the timer.
///
/// ```swift
/// import GrowCore
/// import GrowPluginKit
///
/// public final class HelloPlugin: GrowPlugin {
///   public static let id = "hello"
///   public static let settings = [
///     PluginSetting("greeting", .text, default: "Well done", help: "What to say.")
///   ]
///   public init(context: PluginContext) throws {
///     let greeting = context.config.string("greeting", default: "Well done")
///     context.subscribe(PhaseEnded.self) { event in
///       if event.outcome == .completed { context.log.info("\(greeting)!") }
///     }
///   }
/// }
///
/// @_cdecl("grow_plugin") public func growPlugin() -> UnsafeRawPointer {
///   growPluginDescriptor(HelloPlugin.self)
/// }
/// ```
///
/// Implementation requirements:
/// - `init(context:)` does the set-up and throws `PluginError.unavailable` when something the
///   plugin needs is missing (no `DISPLAY`, no server): the daemon reports it and runs on.
/// - A handler that throws gets the plugin disabled: its subscriptions are removed and `stop()`
///   is called. Other plugins and the timer are not affected.
/// - `stop()` undoes what the plugin changed outside the process (it must not leave the desktop
///   silenced, for example). It is called once, when the daemon exits or disables the plugin.
@MainActor
public protocol GrowPlugin: AnyObject {
  /// The id used in the config: `[plugins] enable = ID` and `[plugin.ID]`.
  /// Letters, digits, `-` and `_`.
  static var id: String { get }
  /// One line for `grow plugins`: what the plugin does.
  static var summary: String { get }
  /// The keys of `[plugin.ID]`, each with its type, default and one line of help. The daemon
  /// and `grow config check` check the section against them (file, line, key, did-you-mean)
  /// before the plugin starts, and `grow.ini(5)` lists them. Empty: the section is unchecked.
  static var settings: [PluginSetting] { get }
  /// Sets the plugin up. Called once, on the event loop.
  init(context: PluginContext) throws
  /// Undo what the plugin changed; called once before it is unloaded or the daemon exits.
  func stop()
}

extension GrowPlugin {
  public static var summary: String { "" }
  public static var settings: [PluginSetting] { [] }
  public func stop() {}
}

/// A plugin whose undoing needs answers from other processes (the dnd plugin asks the
/// notification server to switch back): the host calls `stop(then:)` instead of `stop()` and
/// waits for `completion` (at most a few seconds) before the daemon exits, so the loop keeps
/// turning meanwhile and the calls can be asynchronous with timeouts.
@MainActor
public protocol StopsAsynchronously: GrowPlugin {
  /// Undo what the plugin changed, then call `completion` once, whatever happened.
  func stop(then completion: @escaping () -> Void)
}

/// Why a plugin could not run.
public enum PluginError: Error, Equatable, CustomStringConvertible {
  /// Something it needs is not there (a display, a server); the message says what.
  case unavailable(String)
  /// Its configuration is wrong; the message names file, line and key.
  case misconfigured(String)
  /// Anything else.
  case failed(String)
  /// Unavailable, as `unavailable`, for a reason of a known kind (`PluginLimit`): `grow doctor`
  /// advises on the kind, since the words may be in any language.
  case limited(String, PluginLimit)

  public var description: String {
    switch self {
    case .unavailable(let reason), .limited(let reason, _): "unavailable: \(reason)"
    case .misconfigured(let reason): reason
    case .failed(let reason): reason
    }
  }
}

/// What kind of limit a plugin's note or unavailability is (`PluginContext.setNote(_:limit:)`,
/// `setUnavailable(_:limit:)`, `PluginError.limited`), so that `grow doctor` tells what to do
/// without reading the words, which are in the reader's language.
public enum PluginLimit: String, Sendable, Equatable, CaseIterable {
  /// The plugin is for another kind of session (the X11 monitor in a Wayland session): it
  /// stands down, as it should, and there is nothing to fix.
  case otherSession = "other-session"
  /// The desktop lacks something the plugin uses, which another window manager or server has
  /// (an X server without the SYNC extension).
  case desktopLacks = "desktop-lacks"
  /// The compositor does not give a plain client what the plugin needs (no layer shell, no
  /// idle protocol): nothing to fix in Grow.
  case compositorWithholds = "compositor-withholds"
}

/// The version of the plugin API that this GrowPluginKit provides. A plugin records the
/// version it was built against (see `growPluginDescriptor`); the daemon refuses a plugin built
/// for another version with a message naming both, instead of crashing on mismatched types.
public enum GrowPluginAPI {
  /// Emitted into each client, so a plugin carries the version it was compiled with.
  /// 2: `PhaseOutcome` gained `abandoned` (one vocabulary of outcomes).
  @_alwaysEmitIntoClient
  public static var version: UInt32 { 2 }

  /// The name of the C symbol every plugin library exports. A library may name it
  /// `grow_plugin_ID` instead (the built-in plugins do, to link into one test binary); the
  /// daemon looks for that first.
  public static let entrySymbol = "grow_plugin"

  /// Marks a descriptor as Grow's ("GROW").
  @_alwaysEmitIntoClient
  public static var magic: UInt32 { 0x4752_4f57 }
}

/// What a plugin library's `grow_plugin` entry point returns. The first two fields are read
/// as raw `UInt32`s before anything else, so a version mismatch is found without touching a
/// Swift type that may have changed.
@frozen
public struct GrowPluginDescriptor {
  public var magic: UInt32
  public var apiVersion: UInt32
  /// The plugin's metatype (`any GrowPlugin.Type`), as a raw pointer.
  public var pluginType: UnsafeRawPointer

  @inlinable
  public init(magic: UInt32, apiVersion: UInt32, pluginType: UnsafeRawPointer) {
    self.magic = magic
    self.apiVersion = apiVersion
    self.pluginType = pluginType
  }
}

/// Describes `type` for the daemon; return it from your library's `grow_plugin` function.
///
/// Inlined into the plugin, so the version recorded is the one the plugin was compiled with.
@_alwaysEmitIntoClient
public func growPluginDescriptor<P: GrowPlugin>(_ type: P.Type) -> UnsafeRawPointer {
  let descriptor = UnsafeMutablePointer<GrowPluginDescriptor>.allocate(capacity: 1)
  descriptor.initialize(
    to: GrowPluginDescriptor(
      magic: GrowPluginAPI.magic, apiVersion: GrowPluginAPI.version,
      pluginType: unsafeBitCast(type as Any.Type, to: UnsafeRawPointer.self)))
  return UnsafeRawPointer(descriptor)
}
