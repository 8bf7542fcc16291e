import Foundation
import GrowCore
import Testing

@testable import GrowHistory

@Suite struct GardenTests {
  @Test func completedFocusGrowsByLengthAndAbandonedWilts() {
    let end = local("2026-03-02 10:00")
    let garden = Garden([
      focus("math", minutes: 10, endingAt: end), focus("math", minutes: 30, endingAt: end),
      focus("work", minutes: 50, endingAt: end),
      focus("math", minutes: 5, endingAt: end, outcome: .stopped),
      focus("math", minutes: 5, endingAt: end, outcome: .skipped),
      focus("work", minutes: 5, endingAt: end, outcome: .abandoned),
    ])
    #expect(garden.rows.map(\.card) == ["math", "work"])
    #expect(garden.rows[0].plants == [.sprout, .herb, .wilted])
    #expect(garden.rows[1].plants == [.tree, .wilted])
    #expect(
      garden.text(title: "Garden · today") == """
        Garden · today
          math  🌱🌿🥀  2 completed, 1 stopped
          work  🌳🥀  1 completed, 1 abandoned
          🌱 under 20m · 🌿 20m to 45m · 🌳 45m or more · 🥀 stopped or abandoned
        """)
    #expect(
      garden.text(title: "x", style: .init(enabled: true)).contains("\u{1B}[32mmath\u{1B}[0m"))
  }

  @Test func anEmptyGardenSaysHowToGrowSomething() {
    #expect(
      Garden([]).text(title: "Garden · today")
        == "Garden · today: nothing has grown yet; a completed focus phase plants something")
  }

  /// Now and then a focus of 20 minutes or more grows a sunflower instead: about one in
  /// twelve, decided by when it started, so the same history always grows the same garden.
  @Test func aRarePlantNowAndThenTheSameEveryTime() {
    let start = local("2026-03-02 08:00")
    let phases = (0..<1200).map { index in
      focus("math", minutes: 30, endingAt: start.addingTimeInterval(Double(index) * 3600))
    }
    let plants = Garden(phases).rows[0].plants
    let sunflowers = plants.filter { $0 == .sunflower }.count
    #expect((60...140).contains(sunflowers), "\(sunflowers) of 1200")
    #expect(Garden(phases) == Garden(phases))
    #expect(Set(plants) == [.herb, .sunflower])
    let short = (0..<240).map { index in
      focus("math", minutes: 10, endingAt: start.addingTimeInterval(Double(index) * 3600))
    }
    #expect(Garden(short).rows[0].plants.allSatisfy { $0 == .sprout }, "a sprout stays a sprout")
    let rare = phases.first { Plant($0) == .sunflower }
    let text = Garden(rare.map { [$0] } ?? []).text(title: "Garden")
    #expect(text.hasSuffix("🥀 stopped or abandoned · 🌻 now and then"), "\(text)")
    #expect(!Garden(short).text(title: "Garden").contains("🌻"))
  }
}
