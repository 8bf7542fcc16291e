import Foundation
import GrowTestSupport
import Testing

@testable import GrowCLI

/// `grow browser-host` under what a browser (or something posing as one) may send: framing
/// cut anywhere, messages too long or not JSON, a flood. The host and the daemon stay up and
/// the log says why.
@Suite struct BrowserHostTests {
  static func frame(_ text: String) -> [UInt8] {
    let body = Array(text.utf8)
    return withUnsafeBytes(of: UInt32(body.count).littleEndian) { Array($0) } + body
  }

  @Test func messagesAreFoundWhereverTheReadsCutThem() {
    let stream = Self.frame(#"{"type":"site","url":"https://a.test/"}"#) + Self.frame("{}")
    for cut in 1..<stream.count {
      var reader = NativeMessageReader()
      let items = reader.add(stream[..<cut]) + reader.add(stream[cut...])
      #expect(
        items == [
          .message(Array(#"{"type":"site","url":"https://a.test/"}"#.utf8)), .message([123, 125]),
        ],
        "cut at \(cut)")
    }
  }

  @Test func anOverlongMessageIsSkippedAndTheNextOneStillRead() {
    var reader = NativeMessageReader()
    let long = [UInt8](repeating: 120, count: NativeMessageReader.limit + 1)
    let stream = Self.frame(String(decoding: long, as: UTF8.self)) + Self.frame("{}")
    var items: [NativeMessageReader.Item] = []
    for start in stride(from: 0, to: stream.count, by: 4096) {
      items += reader.add(stream[start..<min(start + 4096, stream.count)])
    }
    #expect(items == [.tooLong(NativeMessageReader.limit + 1), .message([123, 125])])
  }

  @Test func hostileInputIsSkippedWithAReasonInTheLogAndTheHostAnswersOn() throws {
    let harness = try DaemonHarness(
      config: "[card.math]\ndistractions = site:video.test\nblock = page\n")
    #expect(try harness.grow("start", "math").status == 0)
    var input: [UInt8] = []
    input += withUnsafeBytes(of: UInt32(1 << 20).littleEndian) { Array($0) }
    input += [UInt8](repeating: 65, count: 1 << 20)
    input += Self.frame("this is not JSON")
    input += Self.frame(#"{"type":"launch-missiles"}"#)
    for index in 0..<5000 {
      input += Self.frame(#"{"type":"site","tab":\#(index),"url":"https://other.test/\#(index)"}"#)
    }
    input += Self.frame(#"{"type":"site","tab":9999,"url":"http://video.test/"}"#)
    let file = FileManager.default.temporaryDirectory
      .appendingPathComponent("grow-host-input-\(UUID().uuidString)")
    try Data(input).write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    // Stdin stays open after the input (as a browser keeps it), so the answers come back.
    let relay = try BackgroundProcess(
      "/bin/sh", ["-c", "cat \"$0\" - | exec \"$1\" browser-host", file.path, Binaries.grow],
      environment: harness.environment, writableStdin: true)
    let answered = try relay.waitUntil(timeout: 60) {
      let output = (try? Data(contentsOf: relay.stdoutURL)) ?? Data()
      return String(decoding: output, as: UTF8.self)
        .contains(#""blocked":true,"tab":9999,"type":"verdict","url":"http:\/\/video.test\/""#)
        || String(decoding: output, as: UTF8.self)
          .contains(#""blocked":true,"tab":9999,"type":"verdict","url":"http://video.test/""#)
    }
    #expect(answered, "stdout: \(relay.stdout.suffix(500))\nstderr: \(relay.stderr)")
    #expect(relay.exitStatus == nil, "the host is still up")
    #expect(try harness.grow("status").status == 0, "the daemon answers")
    let logs = try harness.grow("logs", "--plugin", "browser")
    #expect(logs.stdout.contains("over the limit of 65536; skipped"), "\(logs.stdout)")
    #expect(logs.stdout.contains("not a JSON object"), "\(logs.stdout)")
    #expect(logs.stdout.contains("unknown type \"launch-missiles\""), "\(logs.stdout)")
  }
}
