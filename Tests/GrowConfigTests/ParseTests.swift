import Foundation
import GrowConfig
import GrowCore
import Testing

/// The messages `parse` throws for `text`, one per problem.
func messages(_ text: String, path: String = "config.ini") -> [String] {
  do {
    _ = try GrowConfig.parse(text, path: path)
    return []
  } catch {
    return error.problems.map(\.description)
  }
}

let sample = """
  [timer]
  default-card = work
  focus = 25m
  short-break = 5m
  long-break = 15m
  long-break-after = 4        ; completed focus phases
  auto-start-breaks = true
  auto-start-focus = false

  [card.math]
  focus = 50m
  short-break = 10m
  daily-goal = 2h
  intention = Chapter 3 exercises

  [plugins]
  enable = notify, dnd, x11, statusbar

  [plugin.notify]
  warn-before = 1m
  """

@Test func readsTheDocumentedSample() throws {
  let config = try GrowConfig.parse(sample, path: "config.ini")
  #expect(config.path == "config.ini")
  #expect(config.deck.defaultCardName == "work")
  #expect(config.deck.names == ["work", "math"])
  #expect(try config.deck.card(named: nil) == FocusCard(name: "work"))
  #expect(
    try config.deck.card(named: "math")
      == FocusCard(
        name: "math", focus: 3000, shortBreak: 600, dailyGoal: 7200,
        intention: "Chapter 3 exercises"))
  #expect(config.enabledPlugins == ["notify", "dnd", "x11", "statusbar"])
  #expect(config.pluginSections.keys.sorted() == ["notify"])
  #expect(config.pluginSections["notify"]?.string("warn-before") == "1m")
  #expect(config.pluginSections["notify"]?.line == 19)
}

@Test func sleepLimitIsATimerSettingWithATenMinuteDefault() throws {
  #expect(try GrowConfig.parse("[timer]\nfocus = 25m\n", path: "c").sleepLimit == 600)
  #expect(try GrowConfig.parse("[timer]\nsleep-limit = 2m\n", path: "c").sleepLimit == 120)
  #expect(
    messages("[card.math]\nsleep-limit = 2m\n")
      == ["config.ini:2: 'sleep-limit' belongs in [timer], not in [card.math]"])
  #expect(
    messages("[timer]\nsleep-limit = 0s\n") == [
      "config.ini:2: sleep-limit = '0s' in [timer]: must be at least 1s"
    ])
}

@Test func cardsInheritFromTimerWhateverTheOrder() throws {
  let config = try GrowConfig.parse(
    """
    [card.writing]
    focus = 45m

    [timer]
    focus = 30m
    short-break = 7m
    long-break = 20m
    long-break-after = 3
    auto-start-breaks = no
    auto-start-focus = yes
    daily-goal = 4h
    intention = Deep work
    """, path: "config.ini")
  let base = FocusCard(
    name: "work", focus: 1800, shortBreak: 420, longBreak: 1200, longBreakAfter: 3,
    autoStartBreaks: false, autoStartFocus: true, dailyGoal: 14400, intention: "Deep work")
  var writing = base
  writing.name = "writing"
  writing.focus = 2700
  #expect(config.deck.names == ["work", "writing"])
  #expect(try config.deck.card(named: "work") == base)
  #expect(try config.deck.card(named: "writing") == writing)
}

@Test func aCardCanClearWhatItInherits() throws {
  let config = try GrowConfig.parse(
    """
    [timer]
    daily-goal = 4h
    intention = Deep work
    [card.rest]
    daily-goal = none
    intention =
    [card.zero]
    daily-goal = 0
    """, path: "config.ini")
  #expect(try config.deck.card(named: "rest").dailyGoal == nil)
  #expect(try config.deck.card(named: "rest").intention == nil)
  #expect(try config.deck.card(named: "zero").dailyGoal == nil)
  #expect(try config.deck.card(named: "work").dailyGoal == 14400)
}

@Test func theDefaultCardCanHaveItsOwnSection() throws {
  let config = try GrowConfig.parse(
    """
    [timer]
    default-card = math
    focus = 30m
    [card.code]
    [card.math]
    focus = 50m
    """, path: "config.ini")
  #expect(config.deck.defaultCardName == "math")
  #expect(config.deck.names == ["code", "math"])
  #expect(try config.deck.card(named: nil).focus == 3000)
  #expect(try config.deck.card(named: "code").focus == 1800)
}

@Test func theDefaultCardIsMadeFromTimerWhenItHasNoSection() throws {
  let config = try GrowConfig.parse(
    """
    [timer]
    default-card = reading
    short-break = 8m
    [card.math]
    focus = 50m
    """, path: "config.ini")
  #expect(config.deck.defaultCardName == "reading")
  #expect(config.deck.names == ["reading", "math"])
  #expect(try config.deck.card(named: nil) == FocusCard(name: "reading", shortBreak: 480))
}

@Test func anEmptyFileGivesTheDefaults() throws {
  let config = try GrowConfig.parse("", path: "config.ini")
  #expect(config.deck == .standard)
  #expect(config.enabledPlugins == nil)
  #expect(config.pluginSections.isEmpty)
  #expect(try GrowConfig.parse("; only a comment\n\n# another\n", path: "c").deck == .standard)
}

@Test(arguments: [
  ("true", true), ("TRUE", true), ("yes", true), ("On", true), ("1", true),
  ("false", false), ("No", false), ("off", false), ("0", false), ("FALSE", false),
])
func readsBooleanForms(text: String, value: Bool) throws {
  let config = try GrowConfig.parse("[timer]\nauto-start-focus = \(text)", path: "c")
  #expect(try config.deck.card(named: nil).autoStartFocus == value)
}

@Test(arguments: [
  ("25m", 1500.0), ("90s", 90), ("1h30m", 5400), ("2h", 7200), ("25", 1500), ("1s", 1),
  ("1h 5m", 3900),
])
func readsDurationForms(text: String, seconds: Double) throws {
  let config = try GrowConfig.parse("[timer]\nfocus = \(text)", path: "c")
  #expect(try config.deck.card(named: nil).focus == seconds)
}

@Test func handlesCommentsWhitespaceIndentationAndLineEndings() throws {
  let config = try GrowConfig.parse(
    "\u{FEFF}; grow settings\r\n[timer]\r\n  focus   =   40m   ; long\r\n"
      + "\tshort-break = 6m\r\n# done\r\n[card.math]\r\n   intention = a;b ; note",
    path: "c")
  // Indented keys are keys, not continuations of the previous value.
  #expect(try config.deck.card(named: nil) == FocusCard(name: "work", focus: 2400, shortBreak: 360))
  #expect(try config.deck.card(named: "math").intention == "a;b")
}

@Test func readsPluginsAndTheirSections() throws {
  let config = try GrowConfig.parse(
    """
    [plugins]
    enable = notify ,, dnd,notify
    [plugin.notify]
    warn-before = 1m
    sound = on
    repeat = 3
    urgency = critical
    actions = snooze, skip
    [plugin.unused]
    """, path: "/etc/grow.ini")
  #expect(config.enabledPlugins == ["notify", "dnd"])
  #expect(config.pluginSections.keys.sorted() == ["notify", "unused"])
  let notify = try #require(config.pluginSections["notify"])
  #expect(notify.name == "plugin.notify")
  #expect(notify.line == 3)
  #expect(notify.keys == ["warn-before", "sound", "repeat", "urgency", "actions"])
  #expect(notify["sound"] == ConfigEntry(key: "sound", value: "on", line: 5))
  #expect(try notify.duration("warn-before", default: 30) == 60)
  #expect(try notify.duration("missing", default: 30) == 30)
  #expect(try notify.bool("sound", default: false))
  #expect(try notify.int("repeat", default: 1, in: 1...5) == 3)
  #expect(notify.string("urgency", default: "normal") == "critical")
  #expect(notify.string("nothing") == nil)
  #expect(notify.list("actions") == ["snooze", "skip"])
  #expect(notify.list("nothing", default: ["x"]) == ["x"])
  #expect(config.pluginSections["unused"]?.entries.isEmpty == true)
}

@Test func anEmptyEnableListMeansNoPlugins() throws {
  #expect(try GrowConfig.parse("[plugins]\nenable =", path: "c").enabledPlugins == [])
  #expect(try GrowConfig.parse("[plugins]", path: "c").enabledPlugins == nil)
}

@Test func pluginAccessorsThrowFileLineErrors() throws {
  let config = try GrowConfig.parse(
    """
    [plugin.notify]
    warn-before = 1x
    sound = loud
    repeat = 9
    """, path: "/home/u/.config/grow/config.ini")
  let notify = try #require(config.pluginSections["notify"])
  #expect(
    throws: ConfigError([
      ConfigProblem(
        path: "/home/u/.config/grow/config.ini", line: 2,
        issue: .invalidValue(
          key: "warn-before", value: "1x", section: "plugin.notify",
          reason: "'1x' is not a duration; write it like 25m, 90s or 1h30m"))
    ])
  ) {
    try notify.duration("warn-before", default: 60)
  }
  #expect(
    describe { _ = try notify.duration("warn-before", default: 60) }
      == "/home/u/.config/grow/config.ini:2: warn-before = '1x' in [plugin.notify]: "
      + "'1x' is not a duration; write it like 25m, 90s or 1h30m")
  #expect(
    describe { _ = try notify.bool("sound", default: true) }
      == "/home/u/.config/grow/config.ini:3: sound = 'loud' in [plugin.notify]: "
      + "'loud' is not true or false; write true/false, yes/no, on/off or 1/0")
  #expect(
    describe { _ = try notify.int("repeat", default: 1, in: 1...5) }
      == "/home/u/.config/grow/config.ini:4: repeat = '9' in [plugin.notify]: "
      + "'9' is not a whole number from 1 to 5")
  #expect(
    describe { try notify.checkKeys(["warn-before", "sound", "repeats"]) }
      == "/home/u/.config/grow/config.ini:4: unknown key 'repeat' in [plugin.notify]; "
      + "did you mean 'repeats'?")
  #expect(throws: Never.self) { try notify.checkKeys(["warn-before", "sound", "repeat"]) }
}

/// The description of the ConfigError `body` throws, or "" if it does not throw.
func describe(_ body: () throws -> Void) -> String {
  do {
    try body()
    return ""
  } catch let error as ConfigError {
    return error.description
  } catch {
    return "unexpected error: \(error)"
  }
}

@Test func schemaListsEveryKeyOnce() {
  #expect(
    ConfigSchema.keys(in: .timer).map(\.key) == [
      "default-card", "focus", "short-break", "long-break", "long-break-after",
      "auto-start-breaks", "auto-start-focus", "daily-goal", "intention", "distractions",
      "allow", "block", "break-screen", "sleep-limit",
    ])
  // A card takes every timer key but the two about the timer as a whole.
  #expect(
    ConfigSchema.keys(in: .card).map(\.key)
      == Array(ConfigSchema.keys(in: .timer).map(\.key).dropFirst().dropLast()))
  #expect(ConfigSchema.keys(in: .plugins).map(\.key) == ["enable"])
  #expect(ConfigSchema.key("focus", in: .timer)?.defaultValue == "25m")
  #expect(ConfigSchema.key("daily-goal", in: .card)?.defaultValue == "none")
  #expect(ConfigSchema.key("default-card", in: .card) == nil)
  #expect(ConfigSchema.keys.allSatisfy { !$0.help.isEmpty })
}

@Test func everyCardKeyInTheSchemaChangesTheCard() throws {
  let values = [
    "focus": "1m", "short-break": "2m", "long-break": "3m", "long-break-after": "7",
    "auto-start-breaks": "false", "auto-start-focus": "true", "daily-goal": "1h",
    "intention": "x", "distractions": "steam, firefox:/a{1,3}|reddit/", "allow": "/docs/",
    "block": "minimize", "break-screen": "all",
  ]
  for key in ConfigSchema.keys(in: .card) {
    let value = try #require(values[key.key], "no test value for \(key.key)")
    let config = try GrowConfig.parse("[card.a]\n\(key.key) = \(value)", path: "c")
    var card = try config.deck.card(named: "a")
    card.name = "work"
    #expect(card != FocusCard.standard, "\(key.key) did not change the card")
  }
}

@Test func aBadDistractionRegexIsReportedWithFileAndLine() {
  #expect(
    messages("[timer]\nfocus = 25m\ndistractions = steam, firefox:/(youtube/", path: "c.ini")
      == [
        "c.ini:3: distractions = 'steam, firefox:/(youtube/' in [timer]: '(youtube' is not a "
          + "valid regular expression: a '(' is never closed; close it with ')', or write \\( for a "
          + "parenthesis in the title"
      ])
  #expect(
    messages("[card.a]\nblock = hide", path: "c.ini")
      == ["c.ini:2: block = 'hide' in [card.a]: 'hide' is not one of off, minimize, page, close"])
}

/// `[sync]`: the folder a sync tool shares between machines, and this machine's name there.
@Test func syncFolderAndName() throws {
  let config = try GrowConfig.parse("[sync]\nfolder = ~/Sync/grow\nname = laptop\n", path: "c")
  #expect(config.syncFolder == "~/Sync/grow")
  #expect(config.syncName == "laptop")
  #expect(try GrowConfig.parse("[sync]\nfolder =\n", path: "c").syncFolder == nil)
  #expect(GrowConfig.defaults.syncFolder == nil)
  #expect(throws: ConfigError.self) { try GrowConfig.parse("[sync]\nfoldr = x\n", path: "c") }
}
