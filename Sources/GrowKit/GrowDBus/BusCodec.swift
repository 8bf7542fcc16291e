internal import CDBus

/// Moves `BusValue`s in and out of libdbus message iterators.
///
/// libdbus aborts the process on some invalid input (a string with a NUL byte, a malformed
/// object path), so everything is checked here before it reaches the library.
enum BusCodec {
  static func append(_ value: BusValue, to iterator: inout DBusMessageIter) -> Bool {
    switch value {
    case .byte(var v): return dbus_message_iter_append_basic(&iterator, CDBUS_TYPE_BYTE, &v) != 0
    case .bool(let b):
      var v: dbus_bool_t = b ? 1 : 0
      return dbus_message_iter_append_basic(&iterator, CDBUS_TYPE_BOOLEAN, &v) != 0
    case .int32(var v): return dbus_message_iter_append_basic(&iterator, CDBUS_TYPE_INT32, &v) != 0
    case .uint32(var v):
      return dbus_message_iter_append_basic(&iterator, CDBUS_TYPE_UINT32, &v) != 0
    case .int64(var v): return dbus_message_iter_append_basic(&iterator, CDBUS_TYPE_INT64, &v) != 0
    case .uint64(var v):
      return dbus_message_iter_append_basic(&iterator, CDBUS_TYPE_UINT64, &v) != 0
    case .double(var v):
      return dbus_message_iter_append_basic(&iterator, CDBUS_TYPE_DOUBLE, &v) != 0
    case .string(let s): return appendString(sanitized(s), type: CDBUS_TYPE_STRING, &iterator)
    case .objectPath(let s):
      guard isValidObjectPath(s) else { return false }
      return appendString(s, type: CDBUS_TYPE_OBJECT_PATH, &iterator)
    case .signature(let s):
      guard dbus_signature_validate(s, nil) != 0 else { return false }
      return appendString(s, type: CDBUS_TYPE_SIGNATURE, &iterator)
    case .array(let element, let items):
      guard dbus_signature_validate_single("a" + element, nil) != 0,
        items.allSatisfy({ $0.signature == element })
      else { return false }
      return container(CDBUS_TYPE_ARRAY, element, items, &iterator)
    case .dictEntry(let key, let value):
      return container(CDBUS_TYPE_DICT_ENTRY, nil, [key, value], &iterator)
    case .structure(let fields):
      return container(CDBUS_TYPE_STRUCT, nil, fields, &iterator)
    case .variant(let inner):
      return container(CDBUS_TYPE_VARIANT, inner.signature, [inner], &iterator)
    case .unsupported:
      return false
    }
  }

  private static func container(
    _ type: Int32, _ signature: String?, _ items: [BusValue], _ iterator: inout DBusMessageIter
  ) -> Bool {
    var sub = DBusMessageIter()
    guard dbus_message_iter_open_container(&iterator, type, signature, &sub) != 0 else {
      return false
    }
    for item in items where !append(item, to: &sub) {
      dbus_message_iter_abandon_container(&iterator, &sub)
      return false
    }
    return dbus_message_iter_close_container(&iterator, &sub) != 0
  }

  private static func appendString(_ s: String, type: Int32, _ iterator: inout DBusMessageIter)
    -> Bool
  {
    s.withCString { pointer in
      var p: UnsafePointer<CChar>? = pointer
      return dbus_message_iter_append_basic(&iterator, type, &p) != 0
    }
  }

  static func readAll(_ iterator: inout DBusMessageIter) -> [BusValue] {
    var values: [BusValue] = []
    while dbus_message_iter_get_arg_type(&iterator) != CDBUS_TYPE_INVALID {
      values.append(read(&iterator))
      if dbus_message_iter_next(&iterator) == 0 { break }
    }
    return values
  }

  private static func read(_ iterator: inout DBusMessageIter) -> BusValue {
    let type = dbus_message_iter_get_arg_type(&iterator)
    func basic<T: BitwiseCopyable>(_ initial: T) -> T {
      var value = initial
      dbus_message_iter_get_basic(&iterator, &value)
      return value
    }
    func text() -> String {
      var pointer: UnsafePointer<CChar>? = nil
      dbus_message_iter_get_basic(&iterator, &pointer)
      return pointer.map { String(cString: $0) } ?? ""
    }
    func children() -> [BusValue] {
      var sub = DBusMessageIter()
      dbus_message_iter_recurse(&iterator, &sub)
      return readAll(&sub)
    }
    switch type {
    case CDBUS_TYPE_BYTE: return .byte(basic(UInt8(0)))
    case CDBUS_TYPE_BOOLEAN: return .bool(basic(dbus_bool_t(0)) != 0)
    case CDBUS_TYPE_INT16: return .int32(Int32(basic(Int16(0))))
    case CDBUS_TYPE_UINT16: return .uint32(UInt32(basic(UInt16(0))))
    case CDBUS_TYPE_INT32: return .int32(basic(Int32(0)))
    case CDBUS_TYPE_UINT32: return .uint32(basic(UInt32(0)))
    case CDBUS_TYPE_INT64: return .int64(basic(Int64(0)))
    case CDBUS_TYPE_UINT64: return .uint64(basic(UInt64(0)))
    case CDBUS_TYPE_DOUBLE: return .double(basic(Double(0)))
    case CDBUS_TYPE_STRING: return .string(text())
    case CDBUS_TYPE_OBJECT_PATH: return .objectPath(text())
    case CDBUS_TYPE_SIGNATURE: return .signature(text())
    case CDBUS_TYPE_ARRAY:
      let element = signatureOfElement(&iterator)
      return .array(element: element, children())
    case CDBUS_TYPE_DICT_ENTRY:
      let pair = children()
      guard pair.count == 2 else { return .unsupported(signature: "{}") }
      return .dictEntry(pair[0], pair[1])
    case CDBUS_TYPE_STRUCT: return .structure(children())
    case CDBUS_TYPE_VARIANT: return .variant(children().first ?? .unsupported(signature: ""))
    default: return .unsupported(signature: currentSignature(&iterator))
    }
  }

  private static func signatureOfElement(_ iterator: inout DBusMessageIter) -> String {
    let full = currentSignature(&iterator)
    return full.hasPrefix("a") ? String(full.dropFirst()) : full
  }

  private static func currentSignature(_ iterator: inout DBusMessageIter) -> String {
    guard let pointer = dbus_message_iter_get_signature(&iterator) else { return "" }
    defer { dbus_free(pointer) }
    return String(cString: pointer)
  }

  /// libdbus rejects strings with NUL bytes; Swift strings are valid UTF-8 otherwise.
  static func sanitized(_ s: String) -> String {
    // A byte scan: Character iteration (grapheme breaking) cost each GetStatus reply ~2 %.
    s.utf8.contains(0) ? String(s.map { $0 == "\0" ? "\u{FFFD}" : $0 }) : s
  }

  static func isValidObjectPath(_ path: String) -> Bool {
    dbus_validate_path(path, nil) != 0
  }

  static func isValidErrorName(_ name: String) -> Bool {
    dbus_validate_error_name(name, nil) != 0
  }
}
