import Foundation
import GrowConfig
import GrowCore
import Testing

/// A fresh directory under the system temporary directory, removed by `body`'s end.
func withTemporaryDirectory(_ body: (String) throws -> Void) throws {
  let path = NSTemporaryDirectory() + "/grow-config-tests-" + UUID().uuidString
  try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(atPath: path) }
  try body(path)
}

@Test func defaultPathFollowsXDG() {
  #expect(
    GrowConfig.defaultPath(environment: ["XDG_CONFIG_HOME": "/x/conf", "HOME": "/home/u"])
      == "/x/conf/grow/config.ini")
  #expect(
    GrowConfig.defaultPath(environment: ["XDG_CONFIG_HOME": "/x/conf/", "HOME": "/home/u"])
      == "/x/conf/grow/config.ini")
  #expect(
    GrowConfig.defaultPath(environment: ["HOME": "/home/u"]) == "/home/u/.config/grow/config.ini")
  #expect(
    GrowConfig.defaultPath(environment: ["XDG_CONFIG_HOME": "", "HOME": "/home/u"])
      == "/home/u/.config/grow/config.ini")
  #expect(
    GrowConfig.defaultPath(environment: ["XDG_CONFIG_HOME": "relative/conf", "HOME": "/home/u/"])
      == "/home/u/.config/grow/config.ini")
}

@Test func noFileAtTheDefaultPathMeansDefaults() throws {
  try withTemporaryDirectory { dir in
    let config = try GrowConfig.load(environment: ["XDG_CONFIG_HOME": dir])
    #expect(config == .defaults)
    #expect(config.path == nil)
    #expect(config.deck == .standard)
    #expect(config.enabledPlugins == nil)
  }
}

@Test func loadsTheFileAtTheDefaultPath() throws {
  try withTemporaryDirectory { dir in
    try FileManager.default.createDirectory(
      atPath: dir + "/grow", withIntermediateDirectories: true)
    try sample.write(toFile: dir + "/grow/config.ini", atomically: true, encoding: .utf8)
    let config = try GrowConfig.load(environment: ["XDG_CONFIG_HOME": dir, "HOME": "/nowhere"])
    #expect(config.path == dir + "/grow/config.ini")
    #expect(config.deck.names == ["work", "math"])
    #expect(config.enabledPlugins == ["notify", "dnd", "x11", "statusbar"])
    #expect(config == (try GrowConfig.parse(sample, path: dir + "/grow/config.ini")))
  }
}

@Test func errorsFromAFileOnDiskNameItsPath() throws {
  try withTemporaryDirectory { dir in
    let path = dir + "/config.ini"
    try "[timer]\nfocus = 25m\n\n[card.math]\nfcous = 50m\n".write(
      toFile: path, atomically: true, encoding: .utf8)
    #expect(
      describe { _ = try GrowConfig.load(path: path) }
        == "\(path):5: unknown key 'fcous' in [card.math]; did you mean 'focus'?")
  }
}

@Test func anExplicitPathMustExist() throws {
  try withTemporaryDirectory { dir in
    let path = dir + "/missing.ini"
    #expect(
      throws: ConfigError([ConfigProblem(path: path, line: nil, issue: .fileNotFound)])
    ) { try GrowConfig.load(path: path) }
    #expect(describe { _ = try GrowConfig.load(path: path) } == "\(path): no such file")
  }
}

@Test func unreadableFilesSayWhy() throws {
  try withTemporaryDirectory { dir in
    #expect(
      describe { _ = try GrowConfig.load(path: dir) }
        == "\(dir): cannot read the file: Is a directory")
    // A directory where the default file should be is not "missing".
    try FileManager.default.createDirectory(
      atPath: dir + "/grow/config.ini", withIntermediateDirectories: true)
    #expect(
      describe { _ = try GrowConfig.load(environment: ["XDG_CONFIG_HOME": dir]) }
        == "\(dir)/grow/config.ini: cannot read the file: Is a directory")

    let file = dir + "/plain"
    try "x".write(toFile: file, atomically: true, encoding: .utf8)
    // A path through a regular file: missing at the default path, an error when explicit.
    #expect(
      describe { _ = try GrowConfig.load(path: file + "/config.ini") }
        == "\(file)/config.ini: no such file")
    #expect(try GrowConfig.load(environment: ["XDG_CONFIG_HOME": file]) == .defaults)

    if getuid() != 0 {
      let locked = dir + "/locked.ini"
      try "[timer]".write(toFile: locked, atomically: true, encoding: .utf8)
      try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: locked)
      #expect(
        describe { _ = try GrowConfig.load(path: locked) }
          == "\(locked): cannot read the file: Permission denied")
    }
  }
}

@Test func bigAndRandomFilesOnDisk() throws {
  try withTemporaryDirectory { dir in
    let big = dir + "/big.ini"
    try Data(repeating: 0x3B, count: 1024 * 1024 + 1).write(to: URL(fileURLWithPath: big))
    #expect(
      describe { _ = try GrowConfig.load(path: big) }
        == "\(big): file is larger than 1 MiB; is this really a config file?")

    let exact = dir + "/exact.ini"
    let line = Data(Array(repeating: UInt8(0x3B), count: 99) + [0x0A])
    var data = Data()
    for _ in 0..<(1024 * 1024 / 100) { data.append(line) }
    try data.write(to: URL(fileURLWithPath: exact))
    #expect(try GrowConfig.load(path: exact).deck == .standard)

    let noise = dir + "/noise.ini"
    var generator = SystemRandomNumberGenerator()
    let bytes = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) }
    try Data(bytes).write(to: URL(fileURLWithPath: noise))
    #expect(describe { _ = try GrowConfig.load(path: noise) }.hasPrefix(noise + ":"))
  }
}

/// A FIFO where the config should be would make `open` wait for a writer, forever:
/// refused at once, saying what it is. The load runs on a thread of its own; a writer shows up
/// only if it has not returned after 60 s (far beyond any loaded machine), so old code that
/// waits ends instead of hanging the test, and is caught by the flag.
@Test func aFIFOIsRefusedAtOnceWithoutWaitingForAWriter() throws {
  try withTemporaryDirectory { dir in
    let fifo = dir + "/config.ini"
    #expect(mkfifo(fifo, 0o600) == 0)
    // Written before `returned` is signalled and read after it is waited for.
    final class Answer: @unchecked Sendable { var text: String? }
    let answer = Answer()
    let returned = DispatchSemaphore(value: 0)
    Thread {
      answer.text = describe { _ = try GrowConfig.load(path: fifo) }
      returned.signal()
    }.start()
    let waitedForAWriter = returned.wait(timeout: .now() + 60) == .timedOut
    if waitedForAWriter {
      let descriptor = open(fifo, O_WRONLY | O_NONBLOCK)
      if descriptor >= 0 { close(descriptor) }
      returned.wait()
    }
    #expect(!waitedForAWriter, "the load waited for a writer")
    #expect(
      answer.text
        == "\(fifo): this is a FIFO (named pipe), not a regular file; give the path of the "
        + "config file itself")
  }
}

/// 42,000 `[card.*]` sections, just under the 1 MiB cap: every header used to be compared
/// with every one before it (28 s). Now each line costs the same: the parse's CPU time on this
/// thread (which a busy machine does not change, unlike the seconds `make bench` reports)
/// grows about 4 times for 4 times the sections, where the old one grew 16 times. Past
/// `maximumCards` the file is refused with one problem, at the first card too many.
@Test func fortyTwoThousandCardsUnderTheCapAreReadInLinearTime() throws {
  func cards(_ count: Int) -> String {
    "[timer]\nfocus = 25m\n" + (0..<count).map { "[card.c\($0)]\nfocus = 1m\n" }.joined()
  }
  func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
  }
  func parseCost(_ text: String) -> ([ConfigProblem], Double) {
    let started = threadCPUSeconds()
    var problems: [ConfigProblem] = []
    do {
      _ = try GrowConfig.parse(text, path: "big.ini")
    } catch {
      problems = error.problems
    }
    return (problems, threadCPUSeconds() - started)
  }
  let (small, text) = (cards(10_500), cards(42_000))
  #expect(text.utf8.count < GrowConfig.maximumFileSize)
  _ = parseCost(small)  // warm up
  let (_, smallCost) = parseCost(small)
  let (problems, cost) = parseCost(text)
  // [timer] and its line, then two lines a card: card 1,001 starts on line 2,003.
  let firstTooMany = 3 + 2 * GrowConfig.maximumCards
  #expect(
    problems.map(\.description) == [
      "big.ini:\(firstTooMany): more than 1000 cards from here on; a config may have at most "
        + "1000: remove or merge cards"
    ])
  #expect(cost / smallCost < 10, "4x the cards cost \(cost / smallCost)x the CPU time")
}

@Test func aConfigWithAsManyCardsAsAllowedLoadsThemAll() throws {
  let count = GrowConfig.maximumCards
  let text =
    "[timer]\nfocus = 25m\n" + (0..<count).map { "[card.c\($0)]\nfocus = 1m\n" }.joined()
  let config = try GrowConfig.parse(text, path: "big.ini")
  // The default card ("work", from [timer] alone) comes on top.
  #expect(config.deck.cards.count == count + 1)
  #expect(config.deck.names.last == "c\(count - 1)")
}
