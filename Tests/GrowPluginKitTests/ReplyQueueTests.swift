import Glibc
@_spi(GrowBuiltIn) import GrowPluginKit
import GrowPluginTesting
import Testing

/// The x11 and breakscreen plugins' questions to the X server: replies in order, and "not
/// answering" after the deadline with no wake-up while nothing is asked.
@MainActor @Suite struct ReplyQueueTests {
  let loop = ManualLoop()

  func queue(lost: @escaping () -> Bool = { false }) -> ReplyQueue {
    ReplyQueue(loop: loop, deadline: 2, isLost: lost)
  }

  /// A reply the queue frees after its closure ran.
  func reply() -> UnsafeMutableRawPointer? { malloc(8) }

  @Test func repliesReachTheirClosuresInTheOrderAskedAndOnlyOnceArrived() {
    let replies = queue()
    var order: [UInt32] = []
    for sequence: UInt32 in [7, 8, 9] { replies.expect(sequence) { _ in order.append(sequence) } }
    let arrived: Set<UInt32> = [7, 8]
    replies.collect { arrived.contains($0) ? .answered(reply()) : .waiting }
    #expect(order == [7, 8])
    replies.collect { _ in .answered(nil) }  // the server sent an error for 9
    #expect(order == [7, 8, 9])
  }

  @Test func anUnansweredQuestionPastTheDeadlineMeansNotAnsweringUntilTheNextReply() {
    let replies = queue()
    var told: [Bool] = []
    replies.onAnsweringChanged = { told.append($0) }
    replies.expect(1) { _ in }
    replies.watchDeadline()
    loop.advance(by: 1.9)
    #expect(replies.answering)
    loop.advance(by: 0.2)
    #expect(!replies.answering)
    #expect(told == [false])
    replies.collect { _ in .answered(reply()) }
    #expect(replies.answering)
    #expect(told == [false, true])
  }

  @Test func nothingAskedArmsNoCheckAndTheCheckFollowsTheOldestQuestion() {
    let replies = queue()
    replies.watchDeadline()
    #expect(loop.pendingCount == 0, "an idle connection costs no wake-up")
    replies.expect(1) { _ in }
    replies.watchDeadline()
    loop.advance(by: 1)
    replies.expect(2) { _ in }
    replies.watchDeadline()
    #expect(loop.pendingCount == 1, "one check at a time")
    loop.advance(by: 0.5)
    replies.collect { $0 == 1 ? .answered(reply()) : .waiting }
    // At 2 s the check finds question 2, asked at 1 s: not late yet, so it waits for 3 s.
    loop.advance(by: 1.4)
    #expect(replies.answering)
    #expect(loop.pendingCount == 1)
    loop.advance(by: 0.2)
    #expect(!replies.answering)
    #expect(loop.pendingCount == 0, "no check while not answering")
  }

  @Test func aLostConnectionIsNoSignOfAServerThatStoppedAnswering() {
    var lost = false
    let replies = queue(lost: { lost })
    replies.expect(1) { _ in }
    replies.watchDeadline()
    lost = true
    loop.advance(by: 3)
    #expect(replies.answering)
  }
}
