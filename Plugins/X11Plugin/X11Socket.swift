/// Where the X server of a local display listens: `/tmp/.X11-unix/XN` for `:N`, `:N.S`,
/// `unix:N`. A server started again on the display makes this socket anew, which is how the
/// plugin hears that it is back.
struct X11Socket: Equatable {
  var directory: String
  var name: String

  static let directory = "/tmp/.X11-unix"

  /// The socket for `display`; nil for a display reached over the network (`host:N`), whose
  /// server cannot be watched from here.
  static func path(forDisplay display: String) -> X11Socket? {
    guard let colon = display.lastIndex(of: ":") else { return nil }
    let host = display[..<colon]
    guard host.isEmpty || host == "unix" else { return nil }
    let number = display[display.index(after: colon)...].prefix { $0 != "." }
    guard !number.isEmpty, number.allSatisfy(\.isASCII), number.allSatisfy(\.isNumber) else {
      return nil
    }
    return X11Socket(directory: directory, name: "X\(number)")
  }
}
