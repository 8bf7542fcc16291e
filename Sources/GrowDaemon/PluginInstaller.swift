import FoundationEssentials
import Glibc
import GrowBasics
@_spi(GrowHost) import GrowCore
import GrowPluginKit

/// Why `grow plugin install` installed nothing. Each message names the path and what to do:
/// in English for the log and tests (`description`), in the person's language for the
/// command line (`message`).
public enum PluginInstallError: WordedError, Equatable {
  case notFound(path: String)
  /// A directory with a Swift package whose plugin library is not built yet.
  case notBuilt(directory: String, package: String)
  /// A directory with neither a Swift package nor a program named `grow-plugin-ID`.
  case nothingToInstall(directory: String)
  /// A directory with several programs named `grow-plugin-ID`.
  case severalPrograms(directory: String, programs: [String])
  /// A file that is neither `libgrow-plugin-ID.so` nor a program named `grow-plugin-ID`.
  case unknownName(path: String)
  /// A program without the execute permission.
  case notExecutable(path: String)
  /// A file named as a program that is neither a binary nor a `#!` script.
  case notAProgram(path: String)
  /// A library the daemon would refuse (no entry point, another API version, wrong id).
  case wouldNotLoad(PluginLoadError)
  /// The file, or a directory on the way to it or to the plugin directory, is unsafe
  /// (`TrustedFile`'s rules, the same as at load).
  case untrusted(path: String, reason: String)
  case builtInID(String)
  /// An id the daemon, the config and the CLI could not take as one word (`-rf`, `A_B`).
  case invalidID(String)
  case cannotRead(path: String, reason: String)
  case cannotWrite(path: String, reason: String)
  /// The library killed the process that opened it to check it (`checkInChild`).
  case crashedWhenOpened(path: String, signal: Int32)
  /// What the process that checked the library said was wrong with it (naming the file), in
  /// the person's language already.
  case refusedByCheck(String)

  public var worded: Worded {
    switch self {
    case .notFound(let path):
      Worded(Message("{path}: no such file or directory"), ["path": path])
    case .notBuilt(let directory, let package):
      Worded(
        Message(
          "nothing to install in {directory}: no {library} built yet; run "
            + "'swift build --package-path {package}' first"),
        [
          "directory": directory, "library": PluginLibrary.fileName(for: "ID"),
          "package": package,
        ])
    case .nothingToInstall(let directory):
      Worded(
        Message(
          "nothing to install in {directory}: neither a Swift package (Package.swift) nor a "
            + "program named {program}"),
        ["directory": directory, "program": PluginLibrary.programName(for: "ID")])
    case .severalPrograms(let directory, let programs):
      Worded(
        Message(
          "nothing to install in {directory}: several programs ({programs}); name the one to install"
        ),
        ["directory": directory, "programs": programs.joined(separator: ", ")])
    case .unknownName(let path):
      Worded(
        Message(
          "{path} is not a Grow plugin: its name is neither {library} (a Swift plugin) nor "
            + "{program} (a program)"),
        [
          "path": path, "library": PluginLibrary.fileName(for: "ID"),
          "program": PluginLibrary.programName(for: "ID"),
        ])
    case .notExecutable(let path):
      Worded(
        Message("{path} is not a Grow plugin: it is not executable; run 'chmod +x {path}'"),
        ["path": path])
    case .notAProgram(let path):
      Worded(
        Message(
          "{path} is not a Grow plugin: a program must be a binary or a script starting with '#!'"
        ), ["path": path])
    case .wouldNotLoad(let error): error.worded
    case .untrusted(let path, let reason):
      Worded(Message("refusing to install {path}: {reason}"), ["path": path, "reason": reason])
    case .builtInID(let id):
      Worded(
        Message(
          "'{id}' is the id of a built-in plugin, which would be loaded instead; give your "
            + "plugin another id"), ["id": id])
    case .invalidID(let id):
      Worded(
        Message(
          "'{id}' cannot be a plugin id: it must start with a lower-case letter or a digit, "
            + "then lower-case letters, digits or '-'; rename the file (grow-plugin-ID or "
            + "libgrow-plugin-ID.so)"), ["id": id])
    case .cannotRead(let path, let reason):
      Worded(Message("cannot read {path}: {reason}"), ["path": path, "reason": reason])
    case .cannotWrite(let path, let reason):
      Worded(Message("cannot write {path}: {reason}"), ["path": path, "reason": reason])
    case .crashedWhenOpened(let path, let signal):
      Worded(
        Message(
          "{path} crashed the process that opened it to check it (signal {number}, {signal}); "
            + "loaded by the daemon it would take the daemon down"),
        ["path": path, "number": String(signal), "signal": String(cString: strsignal(signal))])
    case .refusedByCheck(let problem):
      Worded(Message("opened to check it: {problem}"), ["problem": problem])
    }
  }
}

/// What `grow plugin install` put where.
public struct PluginInstallation: Sendable, Equatable {
  public enum Kind: String, Sendable {
    case library
    case executable
  }
  public var id: String
  public var kind: Kind
  /// The file that was copied.
  public var source: String
  /// Where the daemon finds it now.
  public var destination: String
  /// An earlier version was there and was replaced.
  public var replaced: Bool
  /// The plugin of the other kind with the same id that was there and was removed: one id is
  /// one plugin, and the daemon would otherwise pick one of the two by file name.
  public var replacedOther: String? = nil
}

/// Puts a plugin where the daemon finds it (the last of `PluginDirectories.user`,
/// `$XDG_DATA_HOME/grow/plugins`), after the checks the daemon makes when it loads one:
/// `TrustedFile` for the file and every directory on the way, and for a library
/// `PluginLibrary.load` (entry point, API version, id). A file that fails them is not copied,
/// and nothing already installed is touched.
@MainActor
public enum PluginInstaller {
  /// Installs `path`: a library `libgrow-plugin-ID.so`, a program `grow-plugin-ID[.EXT]`, a
  /// Swift package directory (its newest `.build/*/libgrow-plugin-ID.so`) or a directory with
  /// one such program in it (what `grow plugin new --python` writes).
  /// - Parameter checkLibrary: checks a library as `check(library:id:)` does, in another
  ///   process (`grow` runs itself): opening a library runs its constructors, and one that
  ///   crashes must not take the installer down. nil: in this process.
  public static func install(
    _ path: String, into directory: String,
    checkLibrary: ((_ path: String, _ id: String) -> PluginInstallError?)? = nil
  ) throws(PluginInstallError) -> PluginInstallation {
    let file = try locate(path)
    let name = PathText.name(of: file)
    let kind: PluginInstallation.Kind
    let id: String
    if let libraryID = PluginLibrary.id(fromFileName: name) {
      (kind, id) = (.library, libraryID)
    } else if let programID = PluginLibrary.id(fromProgramName: name) {
      (kind, id) = (.executable, programID)
    } else {
      throw .unknownName(path: file)
    }
    guard isInstallableID(id) else { throw .invalidID(id) }
    guard !PluginHost.builtInIDs.contains(id) else { throw .builtInID(id) }
    // The file checked, loaded and copied is the one a symbolic link leads to; its name (the
    // link's) gives the id.
    let trusted: TrustedFile
    do {
      trusted = try TrustedFile.open(file)
    } catch {
      throw .untrusted(path: file, reason: error.description)
    }
    switch kind {
    case .library:
      if let checkLibrary {
        if let problem = checkLibrary(file, id) { throw problem }
      } else if let problem = check(library: trusted.path, id: id) {
        throw .wouldNotLoad(problem)
      }
    case .executable:
      try checkProgram(at: file)
    }
    let destinationName =
      kind == .library ? PluginLibrary.fileName(for: id) : PluginLibrary.programName(for: id)
    let destination = directory + "/" + destinationName
    let replaced = FileManager.default.fileExists(atPath: destination)
    try copy(trusted, to: destination)
    let other =
      directory + "/"
      + (kind == .library ? PluginLibrary.programName(for: id) : PluginLibrary.fileName(for: id))
    let removedOther = FileManager.default.fileExists(atPath: other) && unlink(other) == 0
    return PluginInstallation(
      id: id, kind: kind, source: file, destination: destination, replaced: replaced,
      replacedOther: removedOther ? other : nil)
  }

  /// What the daemon would refuse in library `path` of plugin `id` (entry point, API version,
  /// id); nil when it would load it. Opens it, so its constructors run in this process.
  public static func check(library path: String, id: String) -> PluginLoadError? {
    do {
      _ = try PluginLibrary.load(path: path, expectedID: id)
      return nil
    } catch {
      return error
    }
  }

  /// `[a-z0-9][a-z0-9-]*`: never read as an option (`-rf`), the same word in the file name,
  /// the config and every command.
  static func isInstallableID(_ id: String) -> Bool {
    guard let first = id.unicodeScalars.first, first != "-" else { return false }
    return id.unicodeScalars.allSatisfy {
      ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-"
    }
  }

  /// The file `path` stands for.
  private static func locate(_ path: String) throws(PluginInstallError) -> String {
    var status = stat()
    guard stat(path, &status) == 0 else { throw .notFound(path: path) }
    let isDirectory = status.st_mode & S_IFMT == S_IFDIR
    let absolute =
      (path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path)
    let full = PathText.normalized(absolute)
    guard isDirectory else { return full }
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: full)) ?? []
    if entries.contains("Package.swift") {
      // The newest build, release or debug: the one just made.
      let built = ["release", "debug"].flatMap { configuration in
        let build = full + "/.build/" + configuration
        return ((try? FileManager.default.contentsOfDirectory(atPath: build)) ?? [])
          .filter { PluginLibrary.id(fromFileName: $0) != nil }.map { build + "/" + $0 }
      }
      let newest = built.max { modified($0) < modified($1) }
      guard let newest else {
        throw .notBuilt(directory: full, package: path)
      }
      return newest
    }
    let programs = entries.filter { PluginLibrary.id(fromProgramName: $0) != nil }.sorted()
    guard programs.count == 1 else {
      throw programs.isEmpty
        ? .nothingToInstall(directory: full)
        : .severalPrograms(directory: full, programs: programs)
    }
    return full + "/" + programs[0]
  }

  private static func modified(_ path: String) -> Date {
    ((try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date)
      ?? .distantPast
  }

  /// A program the daemon can start: executable, and an ELF binary or a `#!` script.
  private static func checkProgram(at path: String) throws(PluginInstallError) {
    guard access(path, X_OK) == 0 else {
      throw .notExecutable(path: path)
    }
    var start = [UInt8](repeating: 0, count: 4)
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    let count = descriptor < 0 ? 0 : max(0, read(descriptor, &start, 4))
    if descriptor >= 0 { close(descriptor) }
    start.removeLast(4 - count)
    let isScript = start.starts(with: Array("#!".utf8))
    let isELF = start == [0x7f] + Array("ELF".utf8)
    guard isScript || isELF else {
      throw .notAProgram(path: path)
    }
  }

  /// Copies the content of the checked file (never a link to it, and never changing its
  /// mode) beside `destination` and renames it into place, so the daemon never sees half a
  /// file and a failure leaves what was there. The copy is checked as the daemon will check it
  /// (the plugin directory and every directory above it) before the rename.
  private static func copy(_ source: TrustedFile, to destination: String)
    throws(PluginInstallError)
  {
    let directory = PathText.directory(of: destination)
    do {
      try FileManager.default.createDirectory(
        atPath: directory, withIntermediateDirectories: true,
        attributes: [.posixPermissions: 0o700])
    } catch {
      throw .cannotWrite(path: directory, reason: failureReason(error))
    }
    let temporary = directory + "/.installing-" + PathText.name(of: destination)
    unlink(temporary)
    do {
      try copyContent(of: source, to: temporary)
    } catch {
      unlink(temporary)
      throw error
    }
    do {
      _ = try TrustedFile.open(temporary)
    } catch {
      unlink(temporary)
      throw .untrusted(path: destination, reason: error.description)
    }
    guard rename(temporary, destination) == 0 else {
      let reason = String(cString: strerror(errno))
      unlink(temporary)
      throw .cannotWrite(path: destination, reason: reason)
    }
  }

  /// Writes the bytes of `source` (read through its checked descriptor) into a new file
  /// `temporary`, 0755, synced.
  private static func copyContent(of source: TrustedFile, to temporary: String)
    throws(PluginInstallError)
  {
    let input = open("/proc/self/fd/\(source.descriptor)", O_RDONLY | O_CLOEXEC)
    guard input >= 0 else {
      throw .cannotRead(path: source.path, reason: errorText())
    }
    defer { close(input) }
    let output = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o700)
    guard output >= 0 else { throw .cannotWrite(path: temporary, reason: errorText()) }
    defer { close(output) }
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
      let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      guard count >= 0 else {
        throw .cannotRead(path: source.path, reason: errorText())
      }
      if count == 0 { break }
      var written = 0
      while written < count {
        let step = buffer[written..<count].withUnsafeBytes {
          write(output, $0.baseAddress, $0.count)
        }
        if step < 0 && errno == EINTR { continue }
        guard step > 0 else { throw .cannotWrite(path: temporary, reason: errorText()) }
        written += step
      }
    }
    guard fchmod(output, 0o755) == 0, fsync(output) == 0 else {
      throw .cannotWrite(path: temporary, reason: errorText())
    }
  }

  private static func errorText() -> String { String(cString: strerror(errno)) }
}
