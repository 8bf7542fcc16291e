import Foundation

/// A private PulseAudio server for one test: no hardware, one null sink (`grow`) whose monitor
/// can be recorded, reached through `environment` (PULSE_SERVER). It runs in a directory of its
/// own, so it never meets the person's server, and stops with the test.
public final class PulseAudioServer {
  public let directory: URL
  /// `PULSE_SERVER`, with a private PULSE_RUNTIME_PATH and PULSE_COOKIE, so that no client
  /// (the daemon, pactl, parec) writes into the real home's ~/.config/pulse.
  public let environment: [String: String]
  public private(set) var process: BackgroundProcess

  public init() throws {
    directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("grow-pulse-\(UUID().uuidString)")
    try FileManager.default.createDirectory(
      at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    let socket = directory.appendingPathComponent("native").path
    environment = [
      "PULSE_SERVER": "unix:" + socket, "PULSE_RUNTIME_PATH": directory.path,
      "PULSE_COOKIE": directory.appendingPathComponent("cookie").path,
    ]
    process = try BackgroundProcess(
      "pulseaudio",
      [
        "-n", "--daemonize=no", "--exit-idle-time=-1", "--use-pid-file=no",
        "--log-target=stderr", "-L", "module-null-sink sink_name=grow",
        "-L", "module-native-protocol-unix socket=\(socket) auth-anonymous=1",
      ],
      environment: [
        "HOME": directory.path, "XDG_RUNTIME_DIR": directory.path,
        "XDG_CONFIG_HOME": directory.path,
      ])
    let ready = process.waitUntil(timeout: 30) { [environment] in
      (try? Command.run("pactl", ["info"], environment: environment, timeout: 5).status) == 0
    }
    guard ready else {
      throw HarnessError("pulseaudio did not start: \(process.stderr.suffix(500))")
    }
  }

  deinit {
    _ = process.terminate()
    try? FileManager.default.removeItem(at: directory)
  }

  /// Records what the null sink plays for `seconds` (while `during` runs) and returns the
  /// loudest sample, 0 (silence) to 1 (full scale), as sox's `stat` measures it.
  public func loudest(recording seconds: Double, during: () throws -> Void) throws -> Double {
    try loudest(limit: "timeout \(seconds) ", during: during) { recorder, _ in
      _ = recorder.waitForExit(timeout: seconds + 10)
    }
  }

  /// Records from before `during` runs until `happened` holds (the event the sound belongs
  /// to) and then until the recording holds a sample louder than `heard` (the sound itself),
  /// 30 s at most, and returns the loudest sample. Both waits follow what happens, so a slow
  /// machine records late sounds too, and a quick one does not wait for nothing.
  public func loudest(
    during: () throws -> Void, until happened: @escaping () -> Bool, heard: Double
  ) throws -> Double {
    try loudest(limit: "", during: during) { recorder, raw in
      _ = recorder.waitUntil(timeout: 120, happened)
      _ = recorder.waitUntil(timeout: 30) { ((try? Self.loudest(in: raw)) ?? 0) > heard }
      _ = recorder.terminate()
    }
  }

  private func loudest(
    limit: String, during: () throws -> Void, stop: (BackgroundProcess, String) -> Void
  ) throws -> Double {
    let raw = directory.appendingPathComponent("recording-\(UUID().uuidString).raw").path
    let recorder = try BackgroundProcess(
      "sh",
      [
        "-c",
        "exec \(limit)parec --device=grow.monitor --format=s16le --rate=44100 "
          + "--channels=2 > '\(raw)'",
      ], environment: environment)
    // parec is connected once the server lists its stream.
    _ = recorder.waitUntil(timeout: 10) { [environment] in
      let outputs = try? Command.run(
        "pactl", ["list", "short", "source-outputs"], environment: environment, timeout: 5)
      return outputs?.stdout.isEmpty == false
    }
    try during()
    stop(recorder, raw)
    return try Self.loudest(in: raw)
  }

  /// The loudest sample of a raw recording (s16le, 44.1 kHz, stereo), as sox's `stat` says.
  private static func loudest(in raw: String) throws -> Double {
    let stat = try Command.run(
      "sox",
      ["-t", "raw", "-r", "44100", "-e", "signed", "-b", "16", "-c", "2", raw, "-n", "stat"],
      timeout: 30)
    let text = stat.stdout + stat.stderr
    guard
      let line = text.split(separator: "\n").first(where: {
        $0.hasPrefix("Maximum amplitude:")
      }),
      let value = line.split(separator: " ").last.flatMap({ Double($0) })
    else { throw HarnessError("sox said: \(text.prefix(300))") }
    return value
  }
}
