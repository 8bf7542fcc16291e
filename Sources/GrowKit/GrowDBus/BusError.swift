/// A D-Bus error: a machine-readable name and a message for people.
public struct BusError: Error, Equatable, CustomStringConvertible {
  public var name: String
  public var message: String

  public init(name: String, message: String) {
    self.name = name
    self.message = message
  }

  public var description: String { message.isEmpty ? name : message }

  /// Well-known names from the D-Bus specification.
  public static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
  public static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
  public static let unknownInterface = "org.freedesktop.DBus.Error.UnknownInterface"
  public static let unknownProperty = "org.freedesktop.DBus.Error.UnknownProperty"
  public static let propertyReadOnly = "org.freedesktop.DBus.Error.PropertyReadOnly"
  public static let serviceUnknown = "org.freedesktop.DBus.Error.ServiceUnknown"
  public static let nameHasNoOwner = "org.freedesktop.DBus.Error.NameHasNoOwner"
  public static let noReply = "org.freedesktop.DBus.Error.NoReply"
  public static let failed = "org.freedesktop.DBus.Error.Failed"
  public static let noServer = "org.freedesktop.DBus.Error.NoServer"
}
