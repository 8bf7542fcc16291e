import FoundationEssentials
import Glibc
import GrowLoop

/// Cuts a byte stream into `\n`-terminated lines, refusing lines longer than `limit` without
/// ever holding more than `limit` bytes of one.
package struct LineSplitter {
  package enum Piece: Equatable {
    case line([UInt8])
    /// A line over the limit, dropped; `bytes` is its length (newline excluded).
    case tooLong(bytes: Int)
  }

  package let limit: Int
  private var pending: [UInt8] = []
  /// Bytes skipped so far of an overlong line whose end has not arrived.
  private var skipped = 0

  package init(limit: Int) { self.limit = limit }

  package mutating func feed(_ chunk: some Collection<UInt8>) -> [Piece] {
    var pieces: [Piece] = []
    var rest = chunk[...]
    while let newline = rest.firstIndex(of: UInt8(ascii: "\n")) {
      pieces.append(take(rest[..<newline]))
      rest = rest[rest.index(after: newline)...]
    }
    if skipped > 0 {
      skipped += rest.count
    } else if pending.count + rest.count > limit {
      skipped = pending.count + rest.count
      pending.removeAll()
    } else {
      pending.append(contentsOf: rest)
    }
    return pieces
  }

  /// At end of input: an unterminated last line, if any.
  package mutating func finish() -> [Piece] {
    guard skipped > 0 || !pending.isEmpty else { return [] }
    return [take([UInt8]()[...])]
  }

  private mutating func take(_ tail: some Collection<UInt8>) -> Piece {
    defer {
      pending.removeAll(keepingCapacity: true)
      skipped = 0
    }
    if skipped > 0 { return .tooLong(bytes: skipped + tail.count) }
    if pending.count + tail.count > limit { return .tooLong(bytes: pending.count + tail.count) }
    return .line(pending + tail)
  }
}

/// Lets through `burst` messages at once and `perSecond` on average after that, counting what
/// it held back, so a flood cannot fill the journal. Time is read when asked, on the monotonic
/// clock (a wall clock set back would drive the tokens below zero and silence it for hours);
/// no timer runs.
struct LogRateLimiter {
  let burst: Double
  let perSecond: Double
  private var tokens: Double
  private var lastRefill: MonotonicInstant?
  private var suppressed = 0

  init(burst: Int = 20, perSecond: Double = 5) {
    self.burst = Double(burst)
    self.perSecond = perSecond
    tokens = Double(burst)
  }

  /// Whether to log now, and how many messages were held back since the last one let through.
  mutating func admit(at now: MonotonicInstant) -> (allowed: Bool, heldBack: Int) {
    if let lastRefill {
      tokens = min(burst, tokens + (now - lastRefill) * perSecond)
    }
    lastRefill = now
    guard tokens >= 1 else {
      suppressed += 1
      return (false, 0)
    }
    tokens -= 1
    defer { suppressed = 0 }
    return (true, suppressed)
  }
}
