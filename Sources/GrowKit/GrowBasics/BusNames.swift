/// The names of Grow's D-Bus API, the one place that spells them: GrowPluginKit's
/// `GrowBusAPI` (the daemon, grow-cli, plugins) reads them from here, and so does the `grow`
/// front, which links GrowBasics and nothing else of the kit.
public enum BusNames {
  public static let busName = "org.grow.Grow1"
  public static let objectPath = "/org/grow/Grow1"
  public static let timerInterface = busName + ".Timer"
  public static let pluginsInterface = busName + ".Plugins"
  public static let configInterface = busName + ".Config"
  public static let doNotDisturbInterface = busName + ".DoNotDisturb"
  public static let attentionInterface = busName + ".Attention"
  public static let historyInterface = busName + ".History"
  public static let journeyInterface = busName + ".Journey"
  public static let browserInterface = busName + ".Browser"
  /// `GetStatus` on `timerInterface`: the status as a dictionary of named values.
  public static let getStatus = "GetStatus"
  /// A key of GetStatus's dictionary besides the Timer properties: `[plugin.notify]
  /// warn-before` in seconds (u, 0 for none), read at each call, so a bar follows a config
  /// reload; bars show a focus that ends within it as ending soon.
  public static let warnBefore = "WarnBefore"
}
