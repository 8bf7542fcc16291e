extension String {
  /// The text with `& < > " '` written as entities, safe inside XML, SVG and Pango markup
  /// (waybar renders its text as Pango markup, and a bare `&` makes it show nothing).
  public var markupEscaped: String {
    var escaped = ""
    for character in self {
      switch character {
      case "&": escaped += "&amp;"
      case "<": escaped += "&lt;"
      case ">": escaped += "&gt;"
      case "'": escaped += "&#39;"
      case "\"": escaped += "&quot;"
      default: escaped.append(character)
      }
    }
    return escaped
  }
}
