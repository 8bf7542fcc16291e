/// Which keys the break screen answers on Wayland, from the keyboard's keymap.
///
/// A Wayland client gets evdev key codes and the keymap (XKB text) they mean. The few keys the
/// screen knows are found by name in that text, without libxkbcommon: the `xkb_keycodes`
/// section says `<ESC> = 9;` (XKB codes are evdev codes + 8), the `xkb_symbols` section
/// `key <ESC> { [ Escape ] };` (the first keysym of a key is the one without modifiers). Only
/// the keymap says what a code means: a virtual keyboard (wtype, an on-screen keyboard) numbers
/// its keys as it likes. Without a keymap, or for a name it does not have, the usual evdev
/// codes count (Esc 1, Tab 15, Enter 28, Space 57).
struct WaylandKeys: Equatable, Sendable {
  /// The key's meaning by evdev code, for the keys the screen answers.
  private(set) var names: [UInt32: String]

  /// The evdev codes of a PC keyboard.
  static let standard: [UInt32: String] = [
    1: "Escape", 15: "Tab", 28: "Return", 57: "space", 96: "KP_Enter", 103: "Up", 105: "Left",
    106: "Right", 108: "Down",
  ]
  static let known: Set<String> = [
    "Escape", "Tab", "ISO_Left_Tab", "Return", "KP_Enter", "space", "Up", "Down", "Left", "Right",
  ]

  init() { names = Self.standard }

  /// From an XKB keymap's text; the standard codes when no key's symbols could be read in it.
  init(keymap: String) {
    var codes: [String: UInt32] = [:]
    var symbols: [String: String] = [:]
    var section = ""
    for raw in keymap.split(whereSeparator: \.isNewline) {
      let line = Self.trimmed(raw)
      if line.hasPrefix("xkb_keycodes") {
        section = "keycodes"
      } else if line.hasPrefix("xkb_symbols") {
        section = "symbols"
      } else if line.hasPrefix("xkb_types") || line.hasPrefix("xkb_compat") {
        section = ""
      } else if section == "keycodes", line.hasPrefix("<"), let (name, code) = Self.keycode(line) {
        codes[name] = code
      } else if section == "symbols", line.hasPrefix("key "), let (name, sym) = Self.symbol(line) {
        symbols[name] = sym
      }
    }
    var names: [UInt32: String] = [:]
    for (key, sym) in symbols where Self.known.contains(sym) {
      if let code = codes[key], code >= 8 { names[code - 8] = sym }
    }
    // A keymap that was read is the truth, also when it has none of the keys (wtype typing
    // letters): its codes mean something else than a PC keyboard's.
    self.names = symbols.isEmpty ? Self.standard : names
  }

  /// `<ESC> = 9;` → ("ESC", 9).
  private static func keycode(_ line: String) -> (String, UInt32)? {
    guard let close = line.firstIndex(of: ">"), let equals = line.firstIndex(of: "="),
      close < equals
    else { return nil }
    let name = String(line[line.index(after: line.startIndex)..<close])
    let number = trimmed(line[line.index(after: equals)...].prefix { $0 != ";" })
    return UInt32(number).map { (name, $0) }
  }

  /// `key <TAB> { [ Tab, ISO_Left_Tab ] };` → ("TAB", "Tab"); also with `type=` and
  /// `symbols[Group1]=` before the brackets.
  private static func symbol(_ line: String) -> (String, String)? {
    guard let open = line.firstIndex(of: "<"), let close = line.firstIndex(of: ">"), open < close,
      let bracket = line[close...].firstIndex(of: "[")
    else { return nil }
    let name = String(line[line.index(after: open)..<close])
    let first = trimmed(line[line.index(after: bracket)...].prefix { $0 != "," && $0 != "]" })
    return first.isEmpty ? nil : (name, first)
  }

  private static func trimmed(_ text: Substring) -> String {
    String(text.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
  }

  /// What a pressed key means on the screen; nil for a key it ignores.
  func input(code: UInt32, shift: Bool) -> BreakScreenInput? {
    switch names[code] {
    case "Tab": .tab(backwards: shift)
    case "ISO_Left_Tab", "Left", "Up": .tab(backwards: true)
    case "Right", "Down": .tab(backwards: false)
    case "Return", "KP_Enter", "space": .enter
    case "Escape": .escape
    default: nil
    }
  }
}
