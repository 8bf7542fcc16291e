/// Names of Grow's D-Bus API, shared by the daemon, the CLI and anyone else who talks to it.
public enum GrowBusAPI {
  public static let busName = "org.grow.Grow1"
  public static let objectPath = "/org/grow/Grow1"
  public static let timerInterface = "org.grow.Grow1.Timer"
  public static let pluginsInterface = "org.grow.Grow1.Plugins"
  /// `grow reload`: read config.ini again.
  public static let configInterface = "org.grow.Grow1.Config"
  /// Added by the dnd plugin; absent when that plugin is not running.
  public static let doNotDisturbInterface = "org.grow.Grow1.DoNotDisturb"
  /// Added by the x11 plugin: what distracts the person right now.
  public static let attentionInterface = "org.grow.Grow1.Attention"
  /// `Changed()`: `grow history delete`/`edit` changed the history file; the daemon reads
  /// today's figures again.
  public static let historyInterface = "org.grow.Grow1.History"
  /// Goals and tasks (`grow goal`, `grow task`), for launchers and other apps.
  public static let journeyInterface = "org.grow.Grow1.Journey"
  /// Added by the browser plugin: what the browser extension's host asks and tells
  /// (`Visit`, `Allow`, `BlockedSites`); docs/browser.md.
  public static let browserInterface = "org.grow.Grow1.Browser"

  /// Error names, each sent with a message meant for people.
  public enum ErrorName {
    public static let unknownCard = "org.grow.Grow1.Error.UnknownCard"
    public static let invalidState = "org.grow.Grow1.Error.InvalidState"
    public static let invalidArgument = "org.grow.Grow1.Error.InvalidArgument"
    /// `Config.Reload`: config.ini has problems; the message names each (file, line, key).
    public static let invalidConfig = "org.grow.Grow1.Error.InvalidConfig"
  }
}
