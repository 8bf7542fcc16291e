import GrowCore
import GrowPluginKit

/// Says something kind after every completed focus phase, and tells other plugins it did.
///
/// ```ini
/// [plugin.hello]
/// greeting = Well done
/// ```
public final class HelloPlugin: GrowPlugin {
  public static let id = "hello"
  public static let summary = "greets you after every completed focus phase"

  public init(context: PluginContext) throws {
    let greeting = context.config.string("greeting", default: "Well done")
    var count = 0
    context.subscribe(PhaseEnded.self) { event in
      guard event.phase.kind == .focus, event.outcome == .completed else { return }
      count += 1
      context.log.info("\(greeting)! That was focus phase \(count) on '\(event.phase.card)'.")
      context.publish(HelloSaid(count: count))
    }
  }
}

/// A plugin's own event: anyone can subscribe to it by type.
public struct HelloSaid: GrowEvent {
  public static let eventName = "hello-said"
  public let count: Int
}

@_cdecl("grow_plugin")
public func growPlugin() -> UnsafeRawPointer { growPluginDescriptor(HelloPlugin.self) }
