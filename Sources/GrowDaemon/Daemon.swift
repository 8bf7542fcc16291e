import Dispatch
import Foundation
import GrowConfig
import GrowCore
import GrowDBus
import GrowPluginKit

/// Why the daemon could not start.
public enum DaemonError: Error, CustomStringConvertible {
  case noSessionBus(BusError)
  case alreadyRunning(pid: UInt32?)
  case cannotExport(BusError)

  public var description: String {
    switch self {
    case .noSessionBus(let error):
      "cannot reach the session bus: \(error.message)"
    case .alreadyRunning(let pid):
      "another grow daemon already owns \(GrowBusAPI.busName)"
        + (pid.map { " (pid \($0))" } ?? "")
        + "; use it with 'grow status', or stop it first"
    case .cannotExport(let error):
      "cannot export \(GrowBusAPI.objectPath): \(error.message)"
    }
  }
}

/// The running daemon: the timer, the event bus and the D-Bus service, all on one event loop
/// (the main queue). Nothing here runs on another thread.
@MainActor
public final class Daemon {
  public let events = EventBus()
  public let timer: FocusTimer
  public let log: Logger
  private var connection: BusConnection?
  private var service: TimerService?
  private var signalSources: [any DispatchSourceSignal] = []
  private let reloadDeck: (() throws -> CardDeck)?
  private var externalPlugins: [ExternalPlugin] = []

  /// - Parameter reloadDeck: reads the cards again on SIGHUP; nil to ignore SIGHUP.
  public init(deck: CardDeck, log: Logger, reloadDeck: (() throws -> CardDeck)? = nil) {
    self.log = log
    self.reloadDeck = reloadDeck
    timer = FocusTimer(deck: deck, bus: events, time: DispatchTimeSource())
    events.onSubscriberFailure = { [log] subscriber, error in
      log.error("\(subscriber) failed and was unsubscribed: \(error)")
    }
  }

  /// Connects to the session bus, claims `org.grow.Grow1` and serves the API. Returns once
  /// everything is in place; the main queue then does the rest.
  public func start() throws(DaemonError) {
    let connection: BusConnection
    do {
      connection = try BusConnection.session()
    } catch {
      throw .noSessionBus(error)
    }
    // Export before claiming the name, so the first caller that sees the name finds the object.
    do {
      let object = try BusObject(path: GrowBusAPI.objectPath, on: connection)
      service = TimerService(timer: timer, bus: events, object: object)
    } catch {
      throw .cannotExport(error)
    }
    let owned: Bool
    do {
      owned = try connection.requestName(GrowBusAPI.busName)
    } catch {
      throw .noSessionBus(error)
    }
    guard owned else {
      throw .alreadyRunning(pid: connection.processID(ofOwner: GrowBusAPI.busName))
    }
    connection.onDisconnect = { [weak self] in
      self?.log.error("lost the session bus; exiting")
      self?.shutdown(status: 1)
    }
    self.connection = connection
    installSignalHandlers()
    log.info("ready on \(GrowBusAPI.busName) (pid \(getpid()))")
  }

  /// Starts and runs until SIGTERM or SIGINT.
  public func run() throws(DaemonError) -> Never {
    try start()
    dispatchMain()
  }

  /// Leaves cleanly: the bus name is released when the connection closes.
  public func shutdown(status: Int32 = 0) -> Never {
    log.info("shutting down")
    // Sends SIGTERM at least; `stopExternalPlugins(then:)` is the path that also waits.
    for plugin in externalPlugins { plugin.stop() }
    connection?.close()
    exit(status)
  }

  private func installSignalHandlers() {
    for number in [SIGTERM, SIGINT, SIGHUP] {
      signal(number, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: number, queue: .main)
      source.setEventHandler { [weak self] in
        MainActor.assumeIsolated {
          if number == SIGHUP {
            self?.reload()
          } else {
            self?.stopExternalPlugins { self?.shutdown() }
          }
        }
      }
      source.resume()
      signalSources.append(source)
    }
  }

  // MARK: External plugins, until the plugin host takes over

  /// Starts an `ExternalPlugin` for every `[plugin.ID]` section with an `exec` key. A stopgap
  /// so external plugins run end to end; the plugin host (PluginHost.swift) replaces it.
  public func startExternalPlugins(from config: GrowConfig, growVersion: String) {
    let home = ProcessInfo.processInfo.environment["HOME"]
    for (id, section) in config.pluginSections.sorted(by: { $0.key < $1.key }) {
      do {
        guard let arguments = try ExecCommandLine.arguments(of: section, home: home) else {
          continue
        }
        let context = PluginContext(
          id: id, config: section, log: log.named(id), events: events, timer: timer)
        let plugin = ExternalPlugin(context: context, arguments: arguments, growVersion: growVersion)
        externalPlugins.append(plugin)
        plugin.start()
      } catch {
        log.error("plugin \(id) not started: \(error)")
      }
    }
  }

  /// Stops every external plugin and calls `completion` once all are gone (SIGTERM, then
  /// SIGKILL after their grace period).
  private func stopExternalPlugins(then completion: @escaping () -> Void) {
    var remaining = externalPlugins.count
    guard remaining > 0 else { return completion() }
    for plugin in externalPlugins {
      plugin.stop {
        remaining -= 1
        if remaining == 0 { completion() }
      }
    }
  }

  private func reload() {
    guard let reloadDeck else { return }
    do {
      timer.replaceDeck(try reloadDeck())
      log.info("config reloaded: cards \(timer.deck.names.joined(separator: ", "))")
    } catch {
      log.error("config not reloaded, keeping the old one: \(error)")
    }
  }
}
