import FoundationEssentials
import Glibc
import GrowConfig
@_spi(GrowHost) import GrowCore
import GrowMessages

/// The languages `grow plugin new` writes a plugin in.
enum PluginLanguage: String, CaseIterable {
  case swift, python, shell
}

/// Why `grow plugin new` wrote nothing.
enum PluginScaffoldError: WordedError, Equatable {
  case invalidName(String)
  case exists(String)
  /// `--swift` needs the SDK that `make install` puts in PREFIX/lib/grow.
  case noSDK(searched: String)
  case cannotWrite(path: String, reason: String)

  var worded: Worded {
    switch self {
    case .invalidName(let name):
      Worded(
        Message(
          "'{name}' cannot be a plugin id: use a lower-case letter first, then lower-case "
            + "letters, digits or '-' (up to 32), like 'hello' or 'focus-log'"), ["name": name])
    case .exists(let path):
      Worded(
        Message(
          "{path} exists already; pick another name or remove it first (nothing was written)"),
        ["path": path])
    case .noSDK(let searched):
      Worded(
        Message(
          "no plugin SDK in {directory} (GrowPluginKit.swiftinterface): a Swift plugin builds "
            + "against an installed Grow; run 'make install' in Grow's source tree and then the "
            + "installed grow, or use --python or --shell"), ["directory": searched])
    case .cannotWrite(let path, let reason):
      Worded(Message("cannot write {path}: {reason}"), ["path": path, "reason": reason])
    }
  }
}

/// A new plugin project: the files `grow plugin new` writes, made from templates.
///
/// The Swift package builds against the installed SDK exactly as docs/writing-plugins.md shows
/// (and Tests/GrowCLITests/PluginSDKTests.swift proves), its test uses the installed test kit
/// (libGrowPluginTesting.a, see scripts/install-grow); the Python and shell programs speak the
/// line protocol of docs/plugin-protocol.md.
struct PluginScaffold {
  let id: String
  let language: PluginLanguage
  /// PREFIX/lib/grow of the grow that writes it: the SDK the package builds against.
  let sdk: String

  /// Where `make install` put the plugin guides: PREFIX/share/doc/grow beside PREFIX/lib/grow.
  var docs: String { PathText.directory(of: PathText.directory(of: sdk)) + "/share/doc/grow" }

  /// The ids `grow plugin new` accepts: valid config names (`ConfigSchema.isValidName`) that
  /// also make a Swift module name and a file name without surprises.
  static func isValidID(_ id: String) -> Bool {
    guard let first = id.unicodeScalars.first, ("a"..."z").contains(first), id.count <= 32,
      !id.hasSuffix("-"), ConfigSchema.isValidName(id)
    else { return false }
    return id.unicodeScalars.allSatisfy {
      ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-"
    }
  }

  /// `focus-log` → `FocusLogPlugin`.
  var typeName: String {
    id.split(separator: "-").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
      + "Plugin"
  }

  /// The files, by path relative to the project directory, and whether each is executable.
  var files: [(path: String, text: String, executable: Bool)] {
    switch language {
    case .swift:
      [
        ("Package.swift", swiftPackage, false),
        ("Sources/\(typeName)/\(typeName).swift", swiftPlugin, false),
        ("Tests/\(typeName)Tests/\(typeName)Tests.swift", swiftTest, false),
        ("README.md", readme, false),
        (".gitignore", "/.build\n", false),
      ]
    case .python:
      [
        ("grow-plugin-\(id).py", pythonProgram, true),
        ("test-plugin", programTest, true),
        ("README.md", readme, false),
      ]
    case .shell:
      [
        ("grow-plugin-\(id).sh", shellProgram, true),
        ("test-plugin", programTest, true),
        ("README.md", readme, false),
      ]
    }
  }

  /// Writes the project into `directory`, which must not exist; on a failure halfway the
  /// directory is removed again, so nothing is left half written.
  func write(to directory: String) throws(PluginScaffoldError) {
    let manager = FileManager.default
    guard !manager.fileExists(atPath: directory) else { throw .exists(directory) }
    do {
      try manager.createDirectory(atPath: directory, withIntermediateDirectories: false)
      for file in files {
        let path = directory + "/" + file.path
        try manager.createDirectory(
          atPath: PathText.directory(of: path), withIntermediateDirectories: true)
        try file.text.write(toFile: path, atomically: true, encoding: .utf8)
        if file.executable {
          try manager.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        }
      }
    } catch {
      try? manager.removeItem(atPath: directory)
      throw .cannotWrite(path: directory, reason: failureReason(error))
    }
  }

  // MARK: Swift

  private var swiftPackage: String {
    """
    // swift-tools-version:6.0
    // The Grow plugin '\(id)', built against the installed Grow SDK (see README.md).
    import PackageDescription

    /// PREFIX/lib/grow of the grow you run: libGrowKit.so, the test kit and, in swift/, the
    /// module interfaces.
    let sdk = "\(sdk)"
    let growSDK: [SwiftSetting] = [.unsafeFlags(["-I", sdk + "/swift"])]
    let growKit: [LinkerSetting] = [
      .unsafeFlags(["-L", sdk, "-lGrowKit", "-Xlinker", "-rpath", "-Xlinker", sdk])
    ]

    let package = Package(
      name: "\(id)",
      // libgrow-plugin-\(id).so: the file name tells the daemon the plugin's id.
      products: [.library(name: "grow-plugin-\(id)", type: .dynamic, targets: ["\(typeName)"])],
      targets: [
        .target(name: "\(typeName)", swiftSettings: growSDK, linkerSettings: growKit),
        .testTarget(
          name: "\(typeName)Tests", dependencies: ["\(typeName)"], swiftSettings: growSDK,
          linkerSettings: [.unsafeFlags(["-L", sdk, "-lGrowPluginTesting"])] + growKit),
      ]
    )

    """
  }

  private var swiftPlugin: String {
    """
    import GrowConfig
    import GrowCore
    import GrowPluginKit

    /// Greets every focus phase as it starts, in the daemon's log and in `grow plugins`.
    /// React to other events the same way: PhaseEnded, PhasePaused, SessionStopped, ...
    /// (\(docs)/writing-plugins.md lists them and everything `context` offers).
    public final class \(typeName): GrowPlugin {
      public static let id = "\(id)"
      public static let summary = "greets every focus phase as it starts"
      public static let settings = [
        PluginSetting(
          "greeting", .text, default: "Good luck", help: "What to say when focus starts.")
      ]

      private var focusStarted = 0

      public init(context: PluginContext) throws {
        let greeting = context.config.string("greeting", default: "Good luck")
        context.subscribe(PhaseStarted.self) { [unowned self] event in
          guard event.phase.kind == .focus else { return }
          self.focusStarted += 1
          let message = "\\(greeting): focus \\(self.focusStarted) on \\(event.phase.card)"
          context.log.info(message)
          context.setNote(message)
        }
      }
    }

    /// The entry point the daemon looks up in libgrow-plugin-\(id).so.
    @_cdecl("grow_plugin")
    public func growPlugin() -> UnsafeRawPointer { growPluginDescriptor(\(typeName).self) }

    """
  }

  private var swiftTest: String {
    """
    import GrowCore
    import GrowPluginKit
    import GrowPluginTesting
    import Testing
    import \(typeName)

    /// The plugin on the test kit's manual loop: no daemon, no desktop, milliseconds.
    @MainActor @Suite struct \(typeName)Tests {
      @Test func greetsEveryFocusPhaseAsItStarts() throws {
        let bed = PluginTestBed()
        let timer = FocusTimer(deck: .standard, bus: bed.events, time: bed.loop)
        let plugin = try \(typeName)(
          context: bed.context("\(id)", settings: "greeting = Hi", timer: timer))
        try timer.start()
        let card = timer.deck.defaultCardName
        #expect(bed.logs.messages(at: .info) == ["Hi: focus 1 on \\(card)"])
        // A break is not greeted; the next session's focus is.
        try timer.skip()
        #expect(bed.logs.messages(at: .info).count == 1)
        try timer.stop()
        try timer.start()
        #expect(bed.logs.messages(at: .info) == ["Hi: focus 1 on \\(card)", "Hi: focus 2 on \\(card)"])
        withExtendedLifetime(plugin) {}
      }
    }

    """
  }

  // MARK: Programs

  private var pythonProgram: String {
    """
    #!/usr/bin/env python3
    \"\"\"The Grow plugin '\(id)': greets every focus phase as it starts.

    Grow writes one JSON object per event to stdin and reads commands from stdout (the line
    protocol, \(docs)/plugin-protocol.md). Stderr lines go to the daemon's log.
    \"\"\"
    import json
    import sys

    focus_started = 0
    for line in sys.stdin:
        event = json.loads(line)
        if event.get("type") == "phase-started" and event["phase"]["kind"] == "focus":
            focus_started += 1
            print(f"focus {focus_started} on {event['phase']['card']}", file=sys.stderr, flush=True)
            # A command to Grow, answered by a "command-result" line.
            command = {"command": "log", "message": f"good luck with focus {focus_started}"}
            print(json.dumps(command, separators=(",", ":")), flush=True)

    """
  }

  private var shellProgram: String {
    """
    #!/bin/sh
    # The Grow plugin '\(id)': greets every focus phase as it starts.
    #
    # Grow writes one JSON object per event to stdin and reads commands from stdout (the line
    # protocol, \(docs)/plugin-protocol.md). Stderr lines go to the daemon's log.
    # Keys are sorted and there are no spaces, so fixed patterns find fields.
    focus_started=0
    while IFS= read -r line; do
      case $line in
        *'"type":"phase-started"'*'"kind":"focus"'* | *'"kind":"focus"'*'"type":"phase-started"'*)
          focus_started=$((focus_started + 1))
          echo "focus $focus_started started" >&2
          # A command to Grow, answered by a "command-result" line.
          printf '{"command":"log","message":"good luck with focus %d"}\\n' "$focus_started"
          ;;
      esac
    done

    """
  }

  /// Runs the program as the daemon would (events on stdin, GROW_PLUGIN_ID in the
  /// environment) and checks what it answers.
  private var programTest: String {
    let program = "grow-plugin-\(id).\(language == .python ? "py" : "sh")"
    return """
      #!/bin/sh
      # Feeds '\(program)' the lines the daemon sends when a focus phase starts and checks
      # the command it answers with. Run: ./test-plugin
      set -eu
      cd "$(dirname "$0")"
      phase='{"card":"work","cycle":1,"duration":1500,"ends_at":"2025-03-01T09:55:00.000Z","kind":"focus","paused":false,"started_at":"2025-03-01T09:30:00.000Z"}'
      output=$(
        printf '%s\\n' \\
          '{"grow":"0.1.0","status":{"state":"idle"},"time":"2025-03-01T09:29:58.120Z","type":"hello","v":1}' \\
          "{\\"intention\\":null,\\"phase\\":$phase,\\"time\\":\\"2025-03-01T09:30:00.001Z\\",\\"type\\":\\"phase-started\\",\\"v\\":1}" |
          GROW_PLUGIN_ID=\(id) GROW_PROTOCOL=1 ./\(program) 2>/dev/null
      )
      expected='{"command":"log","message":"good luck with focus 1"}'
      if [ "$output" = "$expected" ]; then
        echo "ok: $output"
      else
        echo "FAILED: expected $expected" >&2
        echo "got: $output" >&2
        exit 1
      fi

      """
  }

  // MARK: README

  /// A Swift plugin sets its note, which `grow plugins` shows; a program has only the log.
  private var whereTheGreetingShows: String {
    language == .swift
      ? "`grow plugins` shows the last greeting under the plugin"
      : "`grow logs --plugin \(id)` shows each greeting, a line of the daemon's log"
  }

  private var readme: String {
    let build: String
    let test: String
    let files: String
    switch language {
    case .swift:
      build = "swift build --package-path \(id)\n"
      test = "swift test --package-path \(id)"
      files = """
        - `Sources/\(typeName)/\(typeName).swift`: the plugin, one event handler.
        - `Tests/\(typeName)Tests/`: its test on Grow's test kit (`GrowPluginTesting`): a manual
          loop and clock, a recording timer, captured log lines; no daemon, milliseconds.
        - `Package.swift`: builds `libgrow-plugin-\(id).so` against the SDK in `\(sdk)`.
          Build with the Swift toolchain that built Grow.
        """
    case .python, .shell:
      build = ""
      test = "\(id)/test-plugin"
      files = """
        - `grow-plugin-\(id).\(language == .python ? "py" : "sh")`: the plugin, a program that \
        reads events on stdin and writes commands on stdout (the line protocol:
          \(docs)/plugin-protocol.md).
        - `test-plugin`: feeds it the lines of a focus phase starting and checks its answer.
        """
    }
    return """
      # \(id): a Grow plugin

      Made by `grow plugin new \(id) --\(language.rawValue)`. It greets every focus phase as
      it starts (\(whereTheGreetingShows)).

      \(files)

      From here to the plugin running in the daemon (run in the directory above this one):

      ```sh
      \(build)grow plugin install \(id)
      ```

      `grow plugin install` checks the plugin as the daemon will (a file only you can change,
      in directories only you can change\(language == .swift ? ", built for this grow's plugin API" : "")),
      copies it to `$XDG_DATA_HOME/grow/plugins`, enables it in config.ini if a
      `[plugins] enable` line would leave it out, and makes a running daemon start it. Run it
      again after every change. Test it with:

      ```sh
      \(test)
      ```

      """
  }
}
