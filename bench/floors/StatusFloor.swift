// The floor for `grow status` (make bench, issue 32): what a status path costs when it links
// only what it needs, the Swift stdlib static, libdbus and Glibc, no GrowKit and no
// FoundationEssentials. It makes the same GetStatus call and prints every field of the reply
// as `key value` lines (with --json, one JSON object), which is the work `grow status` does
// before wording it. A measured prototype of a lean status front, not the product: it says
// nothing in Grow's words and handles no errors beyond exiting 3.
import CDBus
import Glibc

var error = DBusError()
dbus_error_init(&error)
guard let connection = dbus_bus_get_private(DBUS_BUS_SESSION, &error) else { exit(3) }
guard
  let call = dbus_message_new_method_call(
    "org.grow.Grow1", "/org/grow/Grow1", "org.grow.Grow1.Timer", "GetStatus"),
  let reply = dbus_connection_send_with_reply_and_block(connection, call, 5000, &error)
else { exit(3) }

/// One basic value as text: strings quoted for JSON, numbers and booleans as they are.
func text(_ iterator: inout DBusMessageIter) -> String {
  let type = dbus_message_iter_get_arg_type(&iterator)
  switch type {
  case CDBUS_TYPE_STRING, CDBUS_TYPE_OBJECT_PATH:
    var value: UnsafePointer<CChar>?
    dbus_message_iter_get_basic(&iterator, &value)
    guard let value else { return "null" }
    var quoted = "\""
    for scalar in String(cString: value).unicodeScalars {
      switch scalar {
      case "\"": quoted += "\\\""
      case "\\": quoted += "\\\\"
      case _ where scalar.value < 0x20:
        quoted +=
          "\\u00" + (scalar.value < 16 ? "0" : "")
          + String(scalar.value, radix: 16)
      default: quoted.unicodeScalars.append(scalar)
      }
    }
    return quoted + "\""
  case CDBUS_TYPE_BOOLEAN:
    var value: UInt32 = 0
    dbus_message_iter_get_basic(&iterator, &value)
    return value != 0 ? "true" : "false"
  case CDBUS_TYPE_INT32, CDBUS_TYPE_UINT32, CDBUS_TYPE_INT64, CDBUS_TYPE_UINT64, CDBUS_TYPE_DOUBLE,
    CDBUS_TYPE_BYTE, CDBUS_TYPE_INT16, CDBUS_TYPE_UINT16:
    var raw: UInt64 = 0
    dbus_message_iter_get_basic(&iterator, &raw)
    switch type {
    case CDBUS_TYPE_DOUBLE: return String(Double(bitPattern: raw))
    case CDBUS_TYPE_INT32: return String(Int32(truncatingIfNeeded: raw))
    case CDBUS_TYPE_UINT32: return String(UInt32(truncatingIfNeeded: raw))
    case CDBUS_TYPE_INT64: return String(Int64(bitPattern: raw))
    case CDBUS_TYPE_BYTE: return String(UInt8(truncatingIfNeeded: raw))
    case CDBUS_TYPE_INT16: return String(Int16(truncatingIfNeeded: raw))
    case CDBUS_TYPE_UINT16: return String(UInt16(truncatingIfNeeded: raw))
    default: return String(raw)
    }
  case CDBUS_TYPE_VARIANT:
    var inner = DBusMessageIter()
    dbus_message_iter_recurse(&iterator, &inner)
    return text(&inner)
  default: return "null"
  }
}

var fields: [(String, String)] = []
var arguments = DBusMessageIter()
if dbus_message_iter_init(reply, &arguments) != 0,
  dbus_message_iter_get_arg_type(&arguments) == CDBUS_TYPE_ARRAY
{
  var entries = DBusMessageIter()
  dbus_message_iter_recurse(&arguments, &entries)
  while dbus_message_iter_get_arg_type(&entries) == CDBUS_TYPE_DICT_ENTRY {
    var entry = DBusMessageIter()
    dbus_message_iter_recurse(&entries, &entry)
    var key: UnsafePointer<CChar>?
    dbus_message_iter_get_basic(&entry, &key)
    dbus_message_iter_next(&entry)
    if let key { fields.append((String(cString: key), text(&entry))) }
    dbus_message_iter_next(&entries)
  }
}
if CommandLine.arguments.contains("--json") {
  print("{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}")
} else {
  print(fields.map { "\($0.0) \($0.1)" }.joined(separator: "\n"))
}
dbus_connection_close(connection)
