/// Bars and colours for the terminal.
public enum TextChart {
  /// The eighth blocks, thinnest first: a bar's end is drawn to an eighth of a cell.
  static let eighths: [Character] = ["▏", "▎", "▍", "▌", "▋", "▊", "▉", "█"]

  /// A bar `value / maximum` of `width` cells long; empty for zero.
  public static func bar(_ value: Double, of maximum: Double, width: Int) -> String {
    guard maximum > 0, value > 0 else { return "" }
    let eighthsLong = Int((min(value, maximum) / maximum * Double(width * 8)).rounded())
    // A day with any focus at all shows at least a sliver.
    let total = max(1, eighthsLong)
    var bar = String(repeating: "█", count: total / 8)
    if total % 8 > 0 { bar.append(eighths[total % 8 - 1]) }
    return bar
  }

  /// ANSI styles, applied only when colour is on.
  public struct Style: Sendable {
    public let enabled: Bool
    public init(enabled: Bool) { self.enabled = enabled }

    public func bold(_ text: String) -> String { wrap(text, "1") }
    public func green(_ text: String) -> String { wrap(text, "32") }
    public func dim(_ text: String) -> String { wrap(text, "2") }
    public func red(_ text: String) -> String { wrap(text, "31") }

    private func wrap(_ text: String, _ code: String) -> String {
      enabled && !text.isEmpty ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }
  }
}
