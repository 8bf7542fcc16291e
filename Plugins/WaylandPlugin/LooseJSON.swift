import GrowPluginKit

/// i3 IPC and Hyprland replies as plain values (`[String: Any]`, `[Any]`, `String`, `Int`,
/// `Double`, `Bool`), read with the kit's `JSONValue`: FoundationEssentials has no
/// `JSONSerialization`. Integral numbers come out as `Int`, as window ids and pids are (i3's
/// ids are addresses, below 2^53, so a Double holds them exactly); `null` is left out.
enum LooseJSON {
  static func parse(_ bytes: some Collection<UInt8>) -> Any? {
    JSONValue.parse(bytes).flatMap(plain)
  }

  static func plain(_ value: JSONValue) -> Any? {
    switch value {
    case .string(let text): text
    case .number(let number):
      number.rounded() == number && abs(number) < 9.0e15 ? Int(number) : number
    case .bool(let flag): flag
    case .null: nil
    case .object(let fields): fields.compactMapValues(plain)
    case .array(let items): items.compactMap(plain)
    @unknown default: nil
    }
  }
}
