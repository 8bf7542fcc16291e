/// A message with its placeholders' values, said twice: in English to the log (which stays
/// English, to be searched for and pasted into bug reports, like GLib's g_warning), and in
/// the reader's language to the person (`grow plugins`, `grow doctor`, a refusal).
public struct Worded: Sendable, Hashable {
  public let message: Message
  public let values: [String: String]

  public init(_ message: Message, _ values: [String: String] = [:]) {
    self.message = message
    self.values = values
  }

  /// For the log.
  public var english: String { message.renderInEnglish(values) }
  /// For the person.
  public var text: String { message.render(values) }
}

/// An error worded by a `Message`: `description` is its English, for the log, and `message`
/// what a person reads, in their language.
public protocol WordedError: Error, CustomStringConvertible {
  var worded: Worded { get }
}

extension WordedError {
  public var description: String { worded.english }
  public var message: String { worded.text }
}
