/// A D-Bus value with its type, as it travels in a message.
///
/// Only what Grow's API and the desktop services it talks to use is modelled; anything else
/// that arrives is kept as `.unsupported` with its signature so it can be reported.
public indirect enum BusValue: Sendable, Equatable {
  case byte(UInt8)
  case bool(Bool)
  case int32(Int32)
  case uint32(UInt32)
  case int64(Int64)
  case uint64(UInt64)
  case double(Double)
  case string(String)
  case objectPath(String)
  case signature(String)
  /// An array of values that all have the signature `element` (given, so empty arrays can be
  /// sent).
  case array(element: String, [BusValue])
  case dictEntry(BusValue, BusValue)
  case structure([BusValue])
  case variant(BusValue)
  case unsupported(signature: String)

  /// The D-Bus type signature of this value.
  public var signature: String {
    switch self {
    case .byte: "y"
    case .bool: "b"
    case .int32: "i"
    case .uint32: "u"
    case .int64: "x"
    case .uint64: "t"
    case .double: "d"
    case .string: "s"
    case .objectPath: "o"
    case .signature: "g"
    case .array(let element, _): "a" + element
    case .dictEntry(let key, let value): "{" + key.signature + value.signature + "}"
    case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
    case .variant: "v"
    case .unsupported(let signature): signature
    }
  }

  /// An `a{sv}` dictionary, the usual D-Bus shape for "named values", keys sorted.
  public static func vardict(_ entries: [String: BusValue]) -> BusValue {
    .array(
      element: "{sv}",
      entries.sorted { $0.key < $1.key }.map { .dictEntry(.string($0.key), .variant($0.value)) })
  }

  /// The entries of an `a{sv}` dictionary, or nil if this is not one.
  public var vardictEntries: [String: BusValue]? {
    guard case .array("{sv}", let items) = self else { return nil }
    var result: [String: BusValue] = [:]
    for item in items {
      guard case .dictEntry(.string(let key), .variant(let value)) = item else { return nil }
      result[key] = value
    }
    return result
  }

  public var stringValue: String? {
    if case .string(let value) = self { return value }
    return nil
  }

  public var boolValue: Bool? {
    if case .bool(let value) = self { return value }
    return nil
  }

  /// The value as an integer, whatever its integer width.
  public var integerValue: Int64? {
    switch self {
    case .byte(let v): Int64(v)
    case .int32(let v): Int64(v)
    case .uint32(let v): Int64(v)
    case .int64(let v): v
    case .uint64(let v): Int64(exactly: v)
    default: nil
    }
  }

  /// The value inside a variant, or the value itself.
  public var unwrapped: BusValue {
    if case .variant(let inner) = self { return inner.unwrapped }
    return self
  }
}

extension Array where Element == BusValue {
  /// The concatenated signature of a list of arguments.
  public var signature: String { map(\.signature).joined() }
}
