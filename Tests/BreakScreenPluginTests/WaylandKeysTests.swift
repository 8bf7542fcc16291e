import Testing

@testable import BreakScreenPlugin

/// The keys the break screen answers on Wayland, read through the keyboard's keymap.
struct WaylandKeysTests {
  /// As xkbcommon writes a PC keyboard's keymap (what sway sends for a real keyboard).
  static let pcKeymap = """
    xkb_keymap {
    xkb_keycodes "evdev+aliases(qwerty)" {
    \tminimum = 8;
    \tmaximum = 255;
    \t<ESC>                = 9;
    \t<TAB>                = 23;
    \t<RTRN>               = 36;
    \t<LFSH>               = 50;
    \t<AC01>               = 38;
    \t<SPCE>               = 65;
    \talias <AC12>         = <BKSL>;
    };
    xkb_types "complete" {
    \ttype "ONE_LEVEL" {
    \t\tmodifiers= none;
    \t};
    };
    xkb_symbols "pc+us+inet(evdev)" {
    \tname[group1]="English (US)";
    \tkey <ESC>                {\t[          Escape ] };
    \tkey <TAB>                {\t[             Tab,    ISO_Left_Tab ] };
    \tkey <RTRN>               {\t[          Return ] };
    \tkey <AC01>               {\t[               a,               A ] };
    \tkey <SPCE>               {\t[           space ] };
    \tkey <LFSH>               {\ttype= "ONE_LEVEL", symbols[Group1]= [ Shift_L ] };
    };
    };
    """

  /// As wtype 0.4 writes its virtual keyboard's keymap: its own numbering, in order of use.
  static let wtypeKeymap = """
    xkb_keymap {
    xkb_keycodes "(unnamed)" {
    minimum = 8;
    maximum = 11;
    <K1> = 9;
    <K2> = 10;
    };
    xkb_types "(unnamed)" { include "complete" };
    xkb_compatibility "(unnamed)" { include "complete" };
    xkb_symbols "(unnamed)" {
    key <K1> {[Tab]};
    key <K2> {[Return]};
    };
    };
    """

  @Test func aPCKeyboardsKeys() {
    let keys = WaylandKeys(keymap: Self.pcKeymap)
    #expect(keys.input(code: 1, shift: false) == .escape)
    #expect(keys.input(code: 15, shift: false) == .tab(backwards: false))
    #expect(keys.input(code: 15, shift: true) == .tab(backwards: true))
    #expect(keys.input(code: 28, shift: false) == .enter)
    #expect(keys.input(code: 57, shift: false) == .enter)
    #expect(keys.input(code: 30, shift: false) == nil, "a letter does nothing")
  }

  /// wtype's code 1 is Tab, not Escape: only the keymap says what a code means.
  @Test func aVirtualKeyboardsOwnNumbering() {
    let keys = WaylandKeys(keymap: Self.wtypeKeymap)
    #expect(keys.input(code: 1, shift: false) == .tab(backwards: false))
    #expect(keys.input(code: 2, shift: false) == .enter)
    #expect(keys.input(code: 15, shift: false) == nil)
  }

  @Test func withoutAReadableKeymapThePCCodesCount() {
    let keys = WaylandKeys(keymap: "")
    #expect(keys == WaylandKeys())
    #expect(keys.input(code: 1, shift: false) == .escape)
    #expect(keys.input(code: 103, shift: false) == .tab(backwards: true))
  }
}
