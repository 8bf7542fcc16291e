import Glibc

/// Writes `text` and a newline to standard output in one `write(2)`.
///
/// Not `print`: Swift's `print` into a pipe is fully buffered, so a status bar or a script
/// reading `grow` would see nothing until it exits; and one write per line means a reader
/// never sees half a line. When the reader has gone away (EPIPE, with SIGPIPE ignored as the
/// status follower does) there is no one left to tell anything: exit quietly.
func say(_ text: String) { sayExactly(text + "\n") }

/// Writes `text` as it is, for output that carries its own line ends (CSV's CRLF).
func sayExactly(_ text: String) { sayBytes(Array(text.utf8)) }

/// Writes `bytes` as they are (an export streams its rows through here in blocks).
func sayBytes(_ bytes: [UInt8]) {
  var offset = 0
  while offset < bytes.count {
    let written = bytes.withUnsafeBytes { buffer in
      write(1, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
    }
    if written < 0, errno == EINTR { continue }
    if written < 0, errno == EPIPE { exit(0) }
    guard written > 0 else { return }
    offset += written
  }
}
