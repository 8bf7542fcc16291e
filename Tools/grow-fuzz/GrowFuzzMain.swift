// grow-fuzz TARGET ...: the parsers of GrowFuzz.FuzzTarget under libFuzzer, or a replay of
// saved inputs.
//
// `make fuzz` builds it with `--sanitize fuzzer --sanitize address -Xswiftc -DGROW_LIBFUZZER`:
// libFuzzer's own main then runs, and calls LLVMFuzzerTestOneInput below with inputs it
// mutates towards new coverage. Any other build (plain `swift build`) gets the replay instead:
//
//     grow-fuzz config crash-1234 Tests/FuzzCorpus/config
//
// runs each file (directories: each file in them) through the same check and says which broke
// what, so an input libFuzzer saved can be looked at without sanitizers.
import Foundation
import GrowFuzz

#if GROW_LIBFUZZER
  /// Set once, in LLVMFuzzerInitialize, before libFuzzer runs any input.
  nonisolated(unsafe) private var target = FuzzTarget.config

  /// libFuzzer passes its argv here first; the target's name is ours, the rest its flags and
  /// corpus directories, so the name is taken out before libFuzzer reads them.
  @_cdecl("LLVMFuzzerInitialize")
  public func fuzzerInitialize(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
  ) -> CInt {
    guard argc.pointee >= 2, let arguments = argv.pointee, let first = arguments[1],
      let chosen = FuzzTarget(rawValue: String(cString: first))
    else {
      let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")
      FileHandle.standardError.write(
        Data("usage: grow-fuzz \(names) [libFuzzer flags] [corpus directories]\n".utf8))
      exit(2)
    }
    target = chosen
    for index in 1..<Int(argc.pointee) { arguments[index] = arguments[index + 1] }
    argc.pointee -= 1
    return 0
  }

  @_cdecl("LLVMFuzzerTestOneInput")
  public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    // libFuzzer calls from the main thread, so the main actor's checks can run here.
    let broken = target.check(input)
    guard broken.isEmpty else {
      // abort() is a crash to libFuzzer: it saves the input and stops.
      FileHandle.standardError.write(
        Data(("grow-fuzz \(target.rawValue): " + broken.joined(separator: "\n") + "\n").utf8))
      abort()
    }
    return 0
  }
#else
  @main struct GrowFuzzReplay {
    static func main() {
      let arguments = CommandLine.arguments.dropFirst()
      guard let name = arguments.first, let target = FuzzTarget(rawValue: name) else {
        let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")
        print("usage: grow-fuzz \(names) FILE|DIRECTORY...")
        print("(this build replays inputs; `make fuzz` builds the libFuzzer one)")
        exit(2)
      }
      var failed = 0
      let files = arguments.dropFirst().flatMap(Self.files(at:))
      for file in files {
        guard let data = FileManager.default.contents(atPath: file) else {
          print("\(file): cannot read")
          failed += 1
          continue
        }
        let broken = target.check([UInt8](data))
        guard !broken.isEmpty else { continue }
        failed += 1
        print("\(file):\n  " + broken.joined(separator: "\n  "))
      }
      print("\(target.rawValue): \(files.count) inputs, \(failed) broke a promise")
      exit(failed == 0 ? 0 : 1)
    }

    static func files(at path: String) -> [String] {
      var isDirectory: ObjCBool = false
      guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory),
        isDirectory.boolValue
      else { return [path] }
      let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
      return names.sorted().map { "\(path)/\($0)" }
    }
  }
#endif
