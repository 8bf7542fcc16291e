import Foundation
import GrowLoop
import Testing

/// FileWatcher on real pipes, on the main queue as in the daemon.
@MainActor
@Suite struct FileWatcherTests {
  /// A pipe whose ends are closed by the test.
  func makePipe() -> (read: Int32, write: Int32) {
    var ends: [Int32] = [0, 0]
    #expect(pipe(&ends) == 0)
    for end in ends { _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK) }
    return (ends[0], ends[1])
  }

  func settle(until condition: () -> Bool) async throws {
    let deadline = Date().addingTimeInterval(5)
    while !condition(), Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
  }

  @Test func readableFiresWhenDataArrivesAndNotBefore() async throws {
    let (reader, writer) = makePipe()
    defer {
      close(reader)
      close(writer)
    }
    var seen: [String] = []
    let watch = FileWatcher.shared.watch(reader, for: .readable) { _ in
      var buffer = [UInt8](repeating: 0, count: 64)
      let count = read(reader, &buffer, 64)
      if count > 0 { seen.append(String(decoding: buffer[..<count], as: UTF8.self)) }
    }
    defer { watch.cancel() }
    try await Task.sleep(for: .milliseconds(50))
    #expect(seen.isEmpty)
    _ = write(writer, "hello", 5)
    try await settle { !seen.isEmpty }
    #expect(seen == ["hello"])
  }

  @Test func writableIsOnlyReportedWhileAskedFor() async throws {
    let (reader, writer) = makePipe()
    defer {
      close(reader)
      close(writer)
    }
    var writableCount = 0
    let box = WatchBox()
    let watch = FileWatcher.shared.watch(writer, for: []) { _ in
      writableCount += 1
      box.watch?.interest = []
    }
    box.watch = watch
    defer { watch.cancel() }
    try await Task.sleep(for: .milliseconds(50))
    #expect(writableCount == 0)
    watch.interest = .writable
    try await settle { writableCount > 0 }
    #expect(writableCount == 1)
  }

  @Test func aCancelledWatchIsSilentAndItsDescriptorCanBeClosedAtOnce() async throws {
    let (reader, writer) = makePipe()
    var calls = 0
    let watch = FileWatcher.shared.watch(reader, for: .readable) { _ in calls += 1 }
    watch.cancel()
    _ = write(writer, "x", 1)
    try await Task.sleep(for: .milliseconds(50))
    close(reader)
    close(writer)
    #expect(calls == 0)
    #expect(watch.isCancelled)
  }

  @Test func aHangUpIsReportedAsReadable() async throws {
    let (reader, writer) = makePipe()
    defer { close(reader) }
    var ready: FileWatcher.Readiness = []
    let box = WatchBox()
    let watch = FileWatcher.shared.watch(reader, for: .readable) { readiness in
      ready = readiness
      box.watch?.cancel()
    }
    box.watch = watch
    close(writer)
    try await settle { !ready.isEmpty }
    #expect(ready == .readable)
    #expect(read(reader, nil, 0) == 0)
  }

  @Test func aWriterHearsWhenItsReaderIsGoneOnlyIfItAsks() async throws {
    let (reader, writer) = makePipe()
    defer { close(writer) }
    var silent = 0
    var told: FileWatcher.Readiness = []
    let quiet = FileWatcher.shared.watch(writer, for: []) { _ in silent += 1 }
    let box = WatchBox()
    let listening = FileWatcher.shared.watch(writer, for: .hangUp) { readiness in
      told = readiness
      box.watch?.cancel()
    }
    box.watch = listening
    close(reader)
    try await settle { !told.isEmpty }
    #expect(told == .hangUp)
    #expect(silent == 0)
    quiet.cancel()
  }

  @Test func twoWatchesOnOneDescriptorEachGetWhatTheyAskFor() async throws {
    let (reader, writer) = makePipe()
    defer {
      close(reader)
      close(writer)
    }
    var first = 0
    var second = 0
    let a = FileWatcher.shared.watch(reader, for: .readable) { _ in first += 1 }
    let b = FileWatcher.shared.watch(reader, for: .readable) { _ in
      second += 1
      var byte: UInt8 = 0
      _ = read(reader, &byte, 1)
    }
    _ = write(writer, "y", 1)
    try await settle { second > 0 }
    a.cancel()
    _ = write(writer, "z", 1)
    try await settle { second > 1 }
    #expect(first == 1)
    #expect(second == 2)
    b.cancel()
  }

  /// A peer that floods (a compositor's event socket) keeps its descriptor ready: each call
  /// of its handler parses a slice, which takes a few milliseconds. Work queued meanwhile (a
  /// D-Bus call's turn) must run after that one call, not after the many a turn once made.
  @Test func workQueuedBehindAFloodingDescriptorWaitsForOneOfItsCallsOnly() async throws {
    let (reader, writer) = makePipe()
    defer {
      close(reader)
      close(writer)
    }
    let flood = [UInt8](repeating: 0x41, count: 4096)
    _ = write(writer, flood, flood.count)
    var floodCalls = 0
    var callsBeforeQueued: Int?
    let watch = FileWatcher.shared.watch(reader, for: .readable) { _ in
      floodCalls += 1
      // A slice's parsing; the pipe never runs dry while the test runs.
      usleep(3000)
      // Queued after several turns, when the queue holds whatever the flood left there.
      if floodCalls == 10 {
        DispatchQueue.main.async { MainActor.assumeIsolated { callsBeforeQueued = floodCalls } }
      }
    }
    defer { watch.cancel() }
    try await settle { callsBeforeQueued != nil }
    #expect(callsBeforeQueued == 10)
  }
}

/// Lets a handler reach its own watch.
@MainActor private final class WatchBox {
  var watch: FileWatcher.Watch?
}
