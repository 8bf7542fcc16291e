internal import GrowBasics

/// Names of Grow's D-Bus API, shared by the daemon, the CLI and anyone else who talks to it.
public enum GrowBusAPI {
  public static let busName = BusNames.busName
  public static let objectPath = BusNames.objectPath
  public static let timerInterface = BusNames.timerInterface
  public static let pluginsInterface = BusNames.pluginsInterface
  /// `grow reload`: read config.ini again.
  public static let configInterface = BusNames.configInterface
  /// Added by the dnd plugin; absent when that plugin is not running.
  public static let doNotDisturbInterface = BusNames.doNotDisturbInterface
  /// Added by the x11 plugin: what distracts the person right now.
  public static let attentionInterface = BusNames.attentionInterface
  /// `Changed()`: `grow history delete`/`edit` changed the history file; the daemon reads
  /// today's figures again.
  public static let historyInterface = BusNames.historyInterface
  /// Goals and tasks (`grow goal`, `grow task`), for launchers and other apps.
  public static let journeyInterface = BusNames.journeyInterface
  /// Added by the browser plugin: what the browser extension's host asks and tells
  /// (`Visit`, `Allow`, `BlockedSites`); docs/browser.md.
  public static let browserInterface = BusNames.browserInterface

  /// Error names, each sent with a message meant for people.
  public enum ErrorName {
    public static let unknownCard = "org.grow.Grow1.Error.UnknownCard"
    public static let invalidState = "org.grow.Grow1.Error.InvalidState"
    public static let invalidArgument = "org.grow.Grow1.Error.InvalidArgument"
    /// `Config.Reload`: config.ini has problems; the message names each (file, line, key).
    public static let invalidConfig = "org.grow.Grow1.Error.InvalidConfig"
  }
}
