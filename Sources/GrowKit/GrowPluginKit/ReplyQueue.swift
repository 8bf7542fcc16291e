import FoundationEssentials
import Glibc
import GrowCore
import GrowLoop

/// The questions asked of a server that answers in the order it was asked (an X server through
/// XCB), each waiting with the closure for its reply, and whether the server is answering: not
/// while the oldest question has waited longer than `deadline`, again at its next reply.
/// Shared by the x11 and breakscreen plugins' XCB wrappers (X11Display, BreakScreenDisplay),
/// hence in the kit as `@_spi(GrowBuiltIn)`; the C calls stay in those wrappers.
///
/// At most one deadline check is on the loop at a time, and none while nothing is asked: an
/// idle connection costs no wake-up. The check looks at the oldest question when it fires.
@_spi(GrowBuiltIn) @MainActor public final class ReplyQueue {
  /// What a poll for one reply found.
  public enum Poll {
    /// Not here yet.
    case waiting
    /// The reply (freed after its closure ran), or nil when the server sent an error.
    case answered(UnsafeMutableRawPointer?)
  }

  public let deadline: TimeInterval
  public private(set) var answering = true
  /// Called when `answering` changes.
  public var onAnsweringChanged: ((Bool) -> Void)?
  private let loop: any EventLoop
  /// Whether the connection broke: then a late reply is no sign the server stopped answering.
  private let isLost: () -> Bool

  private struct Pending {
    let sequence: UInt32
    /// On the loop's monotonic clock.
    let sentAt: MonotonicInstant
    let handle: (UnsafeMutableRawPointer?) -> Void
  }
  private var pending: [Pending] = []
  private var deadlineArmed = false

  public init(loop: any EventLoop, deadline: TimeInterval, isLost: @escaping () -> Bool) {
    self.loop = loop
    self.deadline = deadline
    self.isLost = isLost
  }

  /// Queues `handle` for the reply to request `sequence`.
  public func expect(_ sequence: UInt32, _ handle: @escaping (UnsafeMutableRawPointer?) -> Void) {
    pending.append(Pending(sequence: sequence, sentAt: loop.monotonicNow, handle: handle))
  }

  /// Hands every reply that has arrived to its closure, in order (closures may ask more);
  /// `poll` asks the connection for the reply to one request.
  public func collect(_ poll: (UInt32) -> Poll) {
    while let first = pending.first, case .answered(let reply) = poll(first.sequence) {
      pending.removeFirst()
      if !answering {
        answering = true
        onAnsweringChanged?(true)
      }
      first.handle(reply)
      free(reply)
    }
  }

  /// Arms the deadline check for the oldest question, if none is armed; call after writing.
  public func watchDeadline() {
    guard !deadlineArmed, answering, let first = pending.first else { return }
    deadlineArmed = true
    let wait = first.sentAt + deadline - loop.monotonicNow
    _ = loop.after(seconds: wait) { [weak self] in self?.deadlinePassed() }
  }

  /// Forgets every question and the callback: the connection is closed.
  public func close() {
    pending.removeAll()
    onAnsweringChanged = nil
  }

  private func deadlinePassed() {
    deadlineArmed = false
    guard !isLost(), let first = pending.first else { return }
    if loop.monotonicNow >= first.sentAt + deadline {
      answering = false
      onAnsweringChanged?(false)
    } else {
      watchDeadline()
    }
  }
}
