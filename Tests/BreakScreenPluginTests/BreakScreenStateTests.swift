import Foundation
import GrowConfig
import GrowCore
import GrowPluginTesting
import Testing

@testable import BreakScreenPlugin

/// The screen's logic apart from any display: buttons, keyboard, postpones, what it says.
@Suite struct BreakScreenStateTests {
  func state(
    cycle: Int = 1, kind: PhaseKind = .shortBreak, settings: BreakScreenSettings = .init()
  ) -> BreakScreenState {
    let phase = Phase(
      kind: kind, card: "math", cycle: cycle, duration: 300,
      startedAt: Date(timeIntervalSince1970: 0))
    return BreakScreenState(phase: phase, setLength: 4, settings: settings)
  }

  @Test func skipAndPostponeUnlessStrictOrNoPostponeIsAllowed() {
    #expect(state().buttons == [.skip, .postpone])
    var strict = BreakScreenSettings()
    strict.strict = true
    #expect(state(settings: strict).buttons.isEmpty)
    var never = BreakScreenSettings()
    never.postponeLimit = 0
    #expect(state(settings: never).buttons == [.skip])
  }

  @Test func tabMovesTheKeyboardAndEnterPressesWhatItIsOn() {
    var screen = state()
    #expect(screen.handle(.enter) == nil, "Enter presses nothing before Tab chose a button")
    #expect(screen.handle(.tab(backwards: false)) == nil)
    #expect(screen.focused == .skip)
    _ = screen.handle(.tab(backwards: false))
    #expect(screen.focused == .postpone)
    _ = screen.handle(.tab(backwards: false))
    #expect(screen.focused == .skip, "Tab wraps round")
    _ = screen.handle(.tab(backwards: true))
    #expect(screen.focused == .postpone, "Shift+Tab goes back")
    #expect(screen.handle(.enter) == .postpone)
    #expect(screen.handle(.escape) == .skip)
    #expect(screen.handle(.clicked(.skip)) == .skip)
  }

  @Test func strictIgnoresEveryKeyAndClick() {
    var settings = BreakScreenSettings()
    settings.strict = true
    var screen = state(settings: settings)
    for input in [
      BreakScreenInput.escape, .enter, .tab(backwards: false), .clicked(.skip), .clicked(.postpone),
    ] {
      #expect(screen.handle(input) == nil)
    }
    #expect(screen.focused == nil)
  }

  @Test func postponesAreCountedUpToTheLimit() {
    var screen = state()
    _ = screen.handle(.tab(backwards: true))
    #expect(screen.focused == .postpone)
    let postponed = [screen.postpone(), screen.postpone(), screen.postpone()]
    #expect(postponed == [true, true, false], "the third of two is refused")
    #expect(screen.buttons == [.skip])
    #expect(screen.focused == .skip, "the keyboard moves off the button that went")
    #expect(screen.handle(.clicked(.postpone)) == nil)
  }

  @Test func itSaysWhatWasDoneAndHowLongIsLeft() {
    let content = state(cycle: 3).content(remaining: 298.2)
    #expect(content.title == "Short break")
    #expect(content.timeLeft == "4:59")
    #expect(content.headline == "Focus 3 of 4 on 'math' done")
    #expect(content.buttons.map(\.label) == ["Skip", "Postpone 2m"])
    #expect(state(cycle: 5).content(remaining: 60).headline == "Focus 1 of 4 on 'math' done")
    #expect(state(cycle: 4, kind: .longBreak).content(remaining: 0).title == "Long break")
    #expect(state().content(remaining: -3).timeLeft == "0:00")
  }

  @Test func suggestionsTakeTurnsAndThePersonsOwnReplaceGrows() {
    let first = state(cycle: 1).content(remaining: 1).suggestion
    #expect(first == "Look out of the window, at something far away.")
    #expect(state(cycle: 2).content(remaining: 1).suggestion != first)
    var settings = BreakScreenSettings()
    settings.suggestions = ["Water the plants", "Stretch"]
    #expect(
      state(cycle: 1, settings: settings).content(remaining: 1).suggestion == "Water the plants")
    #expect(state(cycle: 4, settings: settings).content(remaining: 1).suggestion == "Stretch")
  }

  @Test func theClockChangesAtEachWholeSecond() {
    #expect(BreakScreenState.nextChange(remaining: 299.4).map { ($0 * 10).rounded() } == 4)
    #expect(BreakScreenState.nextChange(remaining: 300) == 1)
    #expect(BreakScreenState.nextChange(remaining: 0.5) == 0.5)
    #expect(BreakScreenState.nextChange(remaining: 0) == nil)
  }

  @Test func settingsAreReadAndCheckedWithTheirLine() throws {
    let section = try PluginSettings.section(
      "breakscreen", "strict = yes\npostpone-limit = 5\nsuggestions = Stretch, Drink water")
    let settings = try BreakScreenSettings(section, cards: [])
    #expect(settings.strict)
    #expect(settings.postponeLimit == 5)
    #expect(settings.suggestions == ["Stretch", "Drink water"])
    #expect(settings.skipWhenFullscreen)
    let bad = try PluginSettings.section("breakscreen", "strict = no", "postpone-limit = 99")
    #expect(throws: ConfigError.self) { try BreakScreenSettings(bad, cards: []) }
  }

  @Test func aCardsBreakScreenIsACardKeyWithItsLineWhenWrong() throws {
    let config = try GrowConfig.parse(
      "[timer]\nbreak-screen = long\n[card.math]\nbreak-screen = all\n", path: "config.ini")
    #expect(try config.deck.card(named: "work").breakScreen == .long)
    #expect(try config.deck.card(named: "math").breakScreen == .all)
    #expect(
      BreakScreenChoice.long.covers(.longBreak) && !BreakScreenChoice.long.covers(.shortBreak))
    #expect(!BreakScreenChoice.all.covers(.focus))
    do {
      _ = try GrowConfig.parse(
        "[timer]\nfocus = 25m\nbreak-screen = sometimes\n", path: "config.ini")
      Issue.record("a bad value was taken")
    } catch {
      #expect(error.problems.first?.line == 3)
      #expect(error.description.contains("config.ini:3"))
      #expect(error.description.contains("'sometimes' is not one of off, short, long, all"))
    }
  }
}
