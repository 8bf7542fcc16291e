internal import GrowBasics

extension String {
  /// The text with `& < > " '` written as entities, safe inside XML, SVG and Pango markup
  /// (GrowBasics' `MarkupText`).
  public var markupEscaped: String { MarkupText.escaped(self) }
}
