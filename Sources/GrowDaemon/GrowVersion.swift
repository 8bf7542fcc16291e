/// Grow's version, as `grow --version` prints it and the plugin protocol's hello line sends it.
public let growVersion = "0.1.0"
