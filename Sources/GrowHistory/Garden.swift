import FoundationEssentials
@_spi(GrowHost) import GrowCore
import GrowMessages

/// What a focus phase leaves in the garden.
public enum Plant: String, Sendable, Equatable, Codable, CaseIterable {
  /// A completed focus under 20 minutes.
  case sprout
  /// A completed focus of 20 to 45 minutes.
  case herb
  /// A completed focus of 45 minutes or more.
  case tree
  /// A focus that ended its session early: stopped, or abandoned (Grow exited).
  case wilted
  /// Now and then, in place of a herb or a tree: a small surprise, decided by when the focus
  /// started (`isRare`), so the same history always grows the same garden.
  case sunflower

  static let herbFrom: Double = 20 * 60
  static let treeFrom: Double = 45 * 60

  /// The plant `phase` grows; nil for breaks and skipped focus, which grow nothing.
  public init?(_ phase: PhaseRecord) {
    guard phase.kind == .focus else { return nil }
    if phase.isAbandoned {
      self = .wilted
    } else if phase.outcome == .completed {
      self =
        phase.actualSeconds < Self.herbFrom
        ? .sprout
        : Self.isRare(startedAt: phase.startedAt)
          ? .sunflower : phase.actualSeconds >= Self.treeFrom ? .tree : .herb
    } else {
      return nil
    }
  }

  public var symbol: String {
    switch self {
    case .sprout: "🌱"
    case .herb: "🌿"
    case .tree: "🌳"
    case .wilted: "🥀"
    case .sunflower: "🌻"
    }
  }

  /// About one focus of 20 minutes or more in `rarity`, picked by a hash of its start (the
  /// phase's identity in the history: phases_by_start), never by chance at run time.
  static func isRare(startedAt: Date) -> Bool {
    // SplitMix64's finalizer: neighbouring seconds give unrelated results.
    var bits = UInt64(bitPattern: Int64(startedAt.timeIntervalSince1970.rounded(.down)))
    bits = (bits ^ (bits >> 30)) &* 0xbf58_476d_1ce4_e5b9
    bits = (bits ^ (bits >> 27)) &* 0x94d0_49bb_1331_11eb
    bits ^= bits >> 31
    return bits % rarity == 0
  }

  /// About one focus of 20 minutes or more in this many grows a sunflower.
  static let rarity: UInt64 = 12
}

/// The garden of a range of days: one row of plants per card, in the order they grew.
public struct Garden: Sendable, Equatable {
  public struct Row: Sendable, Equatable {
    public var card: String
    public var plants: [Plant]
    /// How the phases behind the plants ended, in the core's words.
    public var outcomes: [PhaseOutcome: Int] = [:]
    public var grown: Int { plants.filter { $0 != .wilted }.count }
    public var wilted: Int { plants.count - grown }
    /// `2 completed, 1 stopped`: the plants' phases as every command words outcomes, in the
    /// reader's language.
    public var tally: String { PhaseOutcome.tallyInWords(outcomes) }
  }

  public var rows: [Row]

  /// - Parameter phases: oldest first.
  public init(_ phases: [PhaseRecord]) {
    var rows: [Row] = []
    for phase in phases {
      guard let plant = Plant(phase) else { continue }
      if let index = rows.firstIndex(where: { $0.card == phase.card }) {
        rows[index].plants.append(plant)
        rows[index].outcomes[phase.outcome, default: 0] += 1
      } else {
        rows.append(Row(card: phase.card, plants: [plant], outcomes: [phase.outcome: 1]))
      }
    }
    self.rows = rows.sorted { ($1.grown, $0.card) < ($0.grown, $1.card) }
  }

  public var isEmpty: Bool { rows.isEmpty }

  /// What 🥀 stands for, in the outcomes' words (the reader's language).
  public static var wiltedLegend: String { Message("stopped or abandoned").render() }

  /// The garden for the terminal; `title` names the days.
  public func text(title: String, style: TextChart.Style = .init(enabled: false)) -> String {
    guard !isEmpty else {
      return Message("{title}: nothing has grown yet; a completed focus phase plants something")
        .render(["title": title])
    }
    let width = rows.map(\.card.count).max() ?? 0
    var lines = [style.bold(title)]
    for row in rows {
      let name = row.card.fitted(toWidth: width)
      lines.append(
        "  \(style.green(name))  \(row.plants.map(\.symbol).joined())  \(style.dim(row.tally))")
    }
    let legend =
      rows.contains { $0.plants.contains(.sunflower) }
      ? Message("🌱 under 20m · 🌿 20m to 45m · 🌳 45m or more · 🥀 {wilted} · 🌻 now and then")
        .render(["wilted": Self.wiltedLegend])
      : Message("🌱 under 20m · 🌿 20m to 45m · 🌳 45m or more · 🥀 {wilted}")
        .render(["wilted": Self.wiltedLegend])
    lines.append(style.dim("  " + legend))
    return lines.joined(separator: "\n")
  }
}
