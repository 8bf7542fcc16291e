import Glibc
import GrowLoop

/// Event-driven watches on the process around us, for `grow status --follow`: a bar that dies
/// must not leave its feed behind (waybar leaves orphans that live on for good). Both are
/// FileWatcher watches on the main queue, so nothing polls.
@MainActor
enum ProcessWatch {
  /// Calls `handler` once the process that started us exits.
  ///
  /// A pidfd of the parent becomes readable when it exits. Unlike PR_SET_PDEATHSIG, which
  /// fires when the parent *thread* that forked us ends, this follows the whole process.
  /// - Returns: the watch to keep, or nil when the parent cannot be watched (already gone, or
  ///   a kernel older than 5.3); the stdout watch still ends the feed then.
  static func onParentExit(_ handler: @escaping @MainActor () -> Void) -> FileWatcher.Watch? {
    let parent = getppid()
    guard parent > 1, let descriptor = ProcessDescriptor.open(parent) else { return nil }
    // The parent may have died between getppid() and pidfd_open(): then we were reparented.
    guard getppid() == parent else {
      close(descriptor)
      handler()
      return nil
    }
    return once(descriptor, .readable, closing: true, handler)
  }

  /// Calls `handler` once the reader of `descriptor` (a pipe or socket) has gone away, without
  /// waiting for the next write to fail with EPIPE: with a template that changes once a
  /// minute, or while idle, that write could be hours away.
  static func onHangUp(of descriptor: Int32, _ handler: @escaping @MainActor () -> Void)
    -> FileWatcher.Watch?
  {
    var info = stat()
    // Files and terminals never hang up in a way epoll reports.
    guard fstat(descriptor, &info) == 0,
      info.st_mode & S_IFMT == S_IFIFO || info.st_mode & S_IFMT == S_IFSOCK
    else { return nil }
    return once(descriptor, .hangUp, closing: false, handler)
  }

  private static func once(
    _ descriptor: Int32, _ readiness: FileWatcher.Readiness, closing: Bool,
    _ handler: @escaping @MainActor () -> Void
  ) -> FileWatcher.Watch {
    let box = WatchBox()
    let watch = FileWatcher.shared.watch(descriptor, for: readiness) { _ in
      box.watch?.cancel()
      if closing { close(descriptor) }
      handler()
    }
    box.watch = watch
    return watch
  }
}

/// Lets a handler reach its own watch.
@MainActor
final class WatchBox {
  var watch: (any DescriptorWatch)?
}
