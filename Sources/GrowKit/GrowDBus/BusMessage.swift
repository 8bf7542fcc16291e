internal import CDBus
import Glibc

/// A D-Bus message: a method call, a reply, an error or a signal.
public final class BusMessage: @unchecked Sendable {
  // @unchecked: a message is built by one party and read by another; libdbus messages are
  // immutable once sent, and this wrapper exposes no mutation after construction.

  public enum Kind: Sendable { case methodCall, methodReturn, error, signal, other }

  let raw: OpaquePointer

  /// Takes over one reference to `raw`.
  init(taking raw: OpaquePointer) { self.raw = raw }

  deinit { dbus_message_unref(raw) }

  public var kind: Kind {
    switch dbus_message_get_type(raw) {
    case DBUS_MESSAGE_TYPE_METHOD_CALL: .methodCall
    case DBUS_MESSAGE_TYPE_METHOD_RETURN: .methodReturn
    case DBUS_MESSAGE_TYPE_ERROR: .error
    case DBUS_MESSAGE_TYPE_SIGNAL: .signal
    default: .other
    }
  }

  public var path: String? { string(dbus_message_get_path(raw)) }
  public var interface: String? { string(dbus_message_get_interface(raw)) }
  public var member: String? { string(dbus_message_get_member(raw)) }
  public var sender: String? { string(dbus_message_get_sender(raw)) }
  public var destination: String? { string(dbus_message_get_destination(raw)) }
  public var errorName: String? { string(dbus_message_get_error_name(raw)) }
  public var signature: String { string(dbus_message_get_signature(raw)) ?? "" }

  /// The arguments, decoded.
  public var arguments: [BusValue] {
    var iterator = DBusMessageIter()
    guard dbus_message_iter_init(raw, &iterator) != 0 else { return [] }
    return BusCodec.readAll(&iterator)
  }

  /// For an error message: the error it carries.
  public var error: BusError? {
    guard kind == .error, let name = errorName else { return nil }
    return BusError(name: name, message: arguments.first?.stringValue ?? "")
  }

  // MARK: Building

  /// A method call to `destination`.
  public static func methodCall(
    destination: String?, path: String, interface: String?, member: String,
    arguments: [BusValue] = []
  ) throws(BusError) -> BusMessage {
    try checkPath(path)
    guard let raw = dbus_message_new_method_call(destination, path, interface, member) else {
      throw BusError(name: BusError.failed, message: "out of memory building \(member) call")
    }
    let message = BusMessage(taking: raw)
    try message.append(arguments)
    return message
  }

  /// A signal sent from `path`.
  /// - Parameter destination: for a signal sent to one connection only (as notification
  ///   servers send ActionInvoked to the client that asked); nil for everyone who asked.
  public static func signal(
    path: String, interface: String, member: String, arguments: [BusValue] = [],
    destination: String? = nil
  ) throws(BusError) -> BusMessage {
    try checkPath(path)
    guard let raw = dbus_message_new_signal(path, interface, member) else {
      throw BusError(name: BusError.failed, message: "out of memory building \(member) signal")
    }
    if let destination, dbus_message_set_destination(raw, destination) == 0 {
      dbus_message_unref(raw)
      throw BusError(name: BusError.failed, message: "out of memory addressing \(member)")
    }
    let message = BusMessage(taking: raw)
    try message.append(arguments)
    return message
  }

  /// The successful reply to this method call.
  public func reply(_ arguments: [BusValue] = []) throws(BusError) -> BusMessage {
    guard let raw = dbus_message_new_method_return(self.raw) else {
      throw BusError(name: BusError.failed, message: "out of memory building a reply")
    }
    let message = BusMessage(taking: raw)
    try message.append(arguments)
    return message
  }

  /// The body of a reply built ahead of any call, from any thread: `reply(copying:)` turns it
  /// into the reply to one call at the cost of a copy, so a large answer that changes rarely
  /// (ListCards with tens of thousands of cards) is encoded once, off the loop.
  public static func replyTemplate(_ arguments: [BusValue]) throws(BusError) -> BusMessage {
    guard let raw = dbus_message_new(DBUS_MESSAGE_TYPE_METHOD_RETURN) else {
      throw BusError(name: BusError.failed, message: "out of memory building a reply")
    }
    let message = BusMessage(taking: raw)
    try message.append(arguments)
    return message
  }

  /// The successful reply to this method call, with the body of `template`
  /// (`replyTemplate`): a copy of its bytes, addressed to the caller.
  public func reply(copying template: BusMessage) throws(BusError) -> BusMessage {
    guard let raw = dbus_message_copy(template.raw) else {
      throw BusError(name: BusError.failed, message: "out of memory copying a reply")
    }
    let message = BusMessage(taking: raw)
    guard dbus_message_set_reply_serial(raw, dbus_message_get_serial(self.raw)) != 0,
      dbus_message_set_destination(raw, dbus_message_get_sender(self.raw)) != 0
    else { throw BusError(name: BusError.failed, message: "out of memory addressing a reply") }
    dbus_message_set_no_reply(raw, 1)
    return message
  }

  /// The first argument when it is a string (or object path), read without decoding the
  /// others: what a match rule's `arg0` compares.
  public var firstString: String? {
    var iterator = DBusMessageIter()
    guard dbus_message_iter_init(raw, &iterator) != 0 else { return nil }
    let type = dbus_message_iter_get_arg_type(&iterator)
    guard type == CDBUS_TYPE_STRING || type == CDBUS_TYPE_OBJECT_PATH else { return nil }
    var pointer: UnsafePointer<CChar>?
    dbus_message_iter_get_basic(&iterator, &pointer)
    return string(pointer)
  }

  /// The error reply to this method call.
  public func errorReply(_ error: BusError) -> BusMessage? {
    let name = BusCodec.isValidErrorName(error.name) ? error.name : BusError.failed
    return dbus_message_new_error(raw, name, BusCodec.sanitized(error.message))
      .map(BusMessage.init(taking:))
  }

  /// Whether the caller asked for no reply.
  public var noReplyExpected: Bool { dbus_message_get_no_reply(raw) != 0 }

  private func append(_ arguments: [BusValue]) throws(BusError) {
    var iterator = DBusMessageIter()
    dbus_message_iter_init_append(raw, &iterator)
    for argument in arguments {
      guard BusCodec.append(argument, to: &iterator) else {
        throw BusError(
          name: BusError.invalidArgs,
          message: "cannot encode a value of type '\(argument.signature)'")
      }
    }
  }

  private static func checkPath(_ path: String) throws(BusError) {
    guard BusCodec.isValidObjectPath(path) else {
      throw BusError(name: BusError.invalidArgs, message: "'\(path)' is not a D-Bus object path")
    }
  }

  private func string(_ pointer: UnsafePointer<CChar>?) -> String? {
    pointer.map { String(cString: $0) }
  }
}
