import FoundationEssentials
import Glibc
@_spi(GrowHost) import GrowCore
import GrowHistory
import GrowMessages

/// Something wrong in a journal of the sync folder: reported with its file and line in the
/// daemon's log and by `grow doctor`. None stops the daemon or touches the history already
/// merged; the records around it are read.
public struct JournalProblem: Sendable, Equatable, Hashable, CustomStringConvertible {
  public enum Issue: Sendable, Equatable, Hashable {
    /// The first line is not a Grow journal's: the file is left alone.
    case notGrows
    /// A record written by a newer Grow: the journal is read up to it, and on after an update.
    case newerVersion(Int)
    /// A line that is not a record (damaged, cut by a crash, edited by hand): skipped.
    case invalidRecord(String)
    /// Longer than a record can be: skipped.
    case lineTooLong
    /// The file was replaced or cut shorter than what was read (a restore from a backup):
    /// read again from its start; what it no longer has stays in the history.
    case rewritten
    /// A symbolic link or not a regular file: not read.
    case notARegularFile
    case unreadable(String)
  }

  public var path: String
  /// 1 for the first line; nil for the whole file.
  public var line: Int?
  public var issue: Issue

  /// What the person can do about it.
  public var fix: String {
    switch issue {
    case .notGrows, .notARegularFile:
      Message("move it out of the sync folder").render()
    case .newerVersion:
      Message("update Grow on this machine").render()
    case .invalidRecord, .lineTooLong, .rewritten:
      Message(
        "nothing, unless it keeps coming: the records around it are merged; the machine that "
          + "writes the journal has the phases in its own history"
      ).render()
    case .unreadable:
      Message("check the file's permissions").render()
    }
  }

  public var description: String {
    let place = line.map { "\(path):\($0)" } ?? path
    switch issue {
    case .notGrows:
      return Message(
        "{place}: not a Grow sync journal (its first line does not say so); it is left alone: "
          + "move it out of the sync folder"
      ).render(["place": place])
    case .newerVersion(let version):
      return Message(
        "{place}: a record of journal version {version}, written by a newer Grow; this one "
          + "reads the journal up to it: update Grow to read the rest"
      ).render(["place": place, "version": version])
    case .invalidRecord(let reason):
      return Message("{place}: skipped a damaged record ({reason})").render([
        "place": place, "reason": reason,
      ])
    case .lineTooLong:
      return Message("{place}: skipped a line too long to be a record").render(["place": place])
    case .rewritten:
      return Message(
        "{place}: the journal was replaced or cut short (restored from a backup?); read again "
          + "from its start, and the phases it no longer holds stay in the history"
      ).render(["place": place])
    case .notARegularFile:
      return Message(
        "{place}: not a regular file (a symbolic link?); Grow does not follow it"
      ).render(["place": place])
    case .unreadable(let reason):
      return Message("{place}: cannot be read ({reason})").render([
        "place": place, "reason": reason,
      ])
    }
  }
}

/// Reads a journal from where it was left (`JournalPosition`), a batch of records at a time,
/// in bounded memory: a whole line is a record, a last line without its newline is not read
/// until it has one (its writer is still at it, or was cut off).
struct JournalReader {
  /// A record is a few KiB at most; a longer line is damage.
  static let longestLine = 1 << 20
  /// Records handed over at a time: one transaction each, so memory stays flat.
  static let batchSize = 2000
  private static let chunkSize = 64 << 10

  let path: String

  /// What one pass over the file found.
  struct Pass {
    var position: JournalPosition
    var problems: [JournalProblem] = []
    /// The machine its first line names.
    var machine: (id: String, name: String)?
  }

  /// Reads what is new since `position` (from the start when nil, or when the file was
  /// replaced or cut), handing `batch` the records and the position after them; `batch` may
  /// throw to stop (the history could not take them), and the position it last accepted is
  /// where the next pass starts.
  func read(
    from position: JournalPosition?,
    batch: ([SyncItem], JournalPosition) throws -> Void
  ) rethrows -> Pass {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
    guard descriptor >= 0 else {
      let issue: JournalProblem.Issue =
        errno == ELOOP ? .notARegularFile : .unreadable(String(cString: strerror(errno)))
      return Pass(
        position: position ?? JournalPosition(inode: 0, offset: 0, line: 0),
        problems: [JournalProblem(path: path, issue: issue)])
    }
    defer { close(descriptor) }
    var info = stat()
    guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
      return Pass(
        position: position ?? JournalPosition(inode: 0, offset: 0, line: 0),
        problems: [JournalProblem(path: path, issue: .notARegularFile)])
    }
    let inode = UInt64(info.st_ino)
    var start = JournalPosition(inode: inode, offset: 0, line: 0)
    var pass = Pass(position: start)
    if let position {
      if position.inode == inode && position.offset <= Int64(info.st_size) {
        start = position
      } else if position.offset > 0 {
        pass.problems.append(JournalProblem(path: path, issue: .rewritten))
      }
    }
    pass.position = start
    guard lseek(descriptor, off_t(start.offset), SEEK_SET) >= 0 else {
      pass.problems.append(
        JournalProblem(path: path, issue: .unreadable(String(cString: strerror(errno)))))
      return pass
    }

    var pending: [UInt8] = []
    var skippingLongLine = false
    var items: [SyncItem] = []
    var offset = start.offset
    var line = start.line
    var chunk = [UInt8](repeating: 0, count: Self.chunkSize)
    var stopped = false
    let decoder = JSONDecoder()
    reading: while !stopped {
      let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else {
        if count < 0 {
          pass.problems.append(
            JournalProblem(path: path, issue: .unreadable(String(cString: strerror(errno)))))
        }
        break
      }
      var from = 0
      while from < count {
        guard let newline = chunk[from..<count].firstIndex(of: 0x0A) else {
          if !skippingLongLine { pending += chunk[from..<count] }
          if pending.count > Self.longestLine {
            skippingLongLine = true
            pending = []
          }
          continue reading
        }
        let lineLength = pending.count + (newline - from)
        line += 1
        if skippingLongLine || lineLength > Self.longestLine {
          pass.problems.append(JournalProblem(path: path, line: line, issue: .lineTooLong))
        } else {
          let bytes: ArraySlice<UInt8> =
            pending.isEmpty ? chunk[from..<newline] : ArraySlice(pending + chunk[from..<newline])
          switch JournalRecord.read(bytes, decoder: decoder) {
          case .header(let id, let name):
            if line == 1 { pass.machine = (id, name) }
            items.append(.machine(id: id, name: name))
          case .items(let found):
            if line == 1 {
              pass.problems.append(JournalProblem(path: path, line: 1, issue: .notGrows))
              stopped = true
            } else {
              items += found
            }
          case .newer(let version):
            pass.problems.append(
              JournalProblem(path: path, line: line, issue: .newerVersion(version)))
            stopped = true
          case .invalid(let reason):
            if line == 1 {
              pass.problems.append(JournalProblem(path: path, line: 1, issue: .notGrows))
              stopped = true
            } else {
              pass.problems.append(
                JournalProblem(path: path, line: line, issue: .invalidRecord(reason)))
            }
          }
        }
        if stopped {
          line -= 1
          break reading
        }
        offset += Int64(lineLength + 1)
        pending = []
        skippingLongLine = false
        from = newline + 1
        if items.count >= Self.batchSize {
          let position = JournalPosition(inode: inode, offset: offset, line: line)
          try batch(items, position)
          pass.position = position
          items = []
        }
      }
    }
    let position = JournalPosition(inode: inode, offset: offset, line: line)
    if position != pass.position || !items.isEmpty {
      try batch(items, position)
      pass.position = position
    }
    return pass
  }
}
