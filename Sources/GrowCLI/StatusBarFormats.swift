import FoundationEssentials
import GrowBasics
@_spi(GrowHost) import GrowCore
import GrowDBus
@_spi(GrowBuiltIn) import GrowPluginKit

// The formats, the clicks and the rendering are GrowBasics' (`BarFormat`, `BarClick`,
// `BarRenderer`), written once for the `grow` front, which follows the daemon itself, and for
// grow-cli; these adapt them to grow-cli's `Date`s, `StatusSnapshot`s and bus values.

typealias StatusBarFormat = BarFormat
typealias StatusBarRenderer = BarRenderer

extension BarClick {
  /// The timer method and its arguments.
  var call: (method: String, arguments: [BusValue]) {
    (method.name, method.seconds.map { [.uint32($0)] } ?? [])
  }
}

extension BarRenderer {
  func update(_ snapshot: StatusSnapshot, at now: Date, isFirst: Bool = true) -> String {
    update(BarSnapshot(snapshot), at: now.timeIntervalSince1970, isFirst: isFirst)
  }

  func once(_ snapshot: StatusSnapshot, at now: Date) -> String {
    once(BarSnapshot(snapshot), at: now.timeIntervalSince1970)
  }

  func nextChange(after now: Date, of snapshot: StatusSnapshot) -> Date? {
    nextChange(after: now.timeIntervalSince1970, of: BarSnapshot(snapshot))
      .map(Date.init(timeIntervalSince1970:))
  }
}

extension BarSnapshot {
  init(_ snapshot: StatusSnapshot) {
    self.init(
      status: snapshot.status.map(StatusFacts.init), doNotDisturb: snapshot.doNotDisturb,
      distraction: snapshot.distraction)
  }
}
