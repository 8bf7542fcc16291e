import Dispatch
import Glibc

/// Event-driven watches on the process around us, for `grow status --follow`: a bar that dies
/// must not leave its feed behind (waybar leaves orphans that live on for good). Both watches
/// are DispatchSources on the main queue, so nothing polls.
///
/// The C interop (pidfd_open, epoll, both looked up with dlsym) lives here and only here.
@MainActor
enum ProcessWatch {
  /// Calls `handler` once the process that started us exits.
  ///
  /// A pidfd of the parent becomes readable when it exits. Unlike PR_SET_PDEATHSIG, which
  /// fires when the parent *thread* that forked us ends, this follows the whole process.
  /// - Returns: the source to keep, or nil when the parent cannot be watched (already gone,
  ///   or a kernel older than 5.3); the stdout watch still ends the feed then.
  static func onParentExit(_ handler: @escaping @MainActor () -> Void)
    -> (any DispatchSourceRead)?
  {
    let parent = getppid()
    guard parent > 1, let open = pidfdOpen else { return nil }
    let descriptor = open(parent, 0)
    guard descriptor >= 0 else { return nil }
    // The parent may have died between getppid() and pidfd_open(): then we were reparented.
    guard getppid() == parent else {
      close(descriptor)
      handler()
      return nil
    }
    return readSource(descriptor, handler)
  }

  /// Calls `handler` once the reader of `descriptor` (a pipe or socket) has gone away, without
  /// waiting for the next write to fail with EPIPE: with a template that changes once a
  /// minute, or while idle, that write could be hours away.
  ///
  /// An epoll set that holds only `descriptor` with no requested events still reports
  /// EPOLLERR (pipe without readers) and EPOLLHUP (socket shut down); the set itself is
  /// readable then, which Dispatch can watch.
  /// - Returns: the source to keep, or nil when `descriptor` is a file or a terminal.
  static func onHangUp(of descriptor: Int32, _ handler: @escaping @MainActor () -> Void)
    -> (any DispatchSourceRead)?
  {
    guard let create = epollCreate, let control = epollControl else { return nil }
    let set = create(O_CLOEXEC)  // EPOLL_CLOEXEC is O_CLOEXEC
    guard set >= 0 else { return nil }
    // A zeroed `struct epoll_event` (no events asked for, no data). 16 bytes covers both the
    // packed 12-byte x86_64 layout and the 16-byte one elsewhere.
    var event = (UInt64(0), UInt64(0))
    let added = withUnsafeMutableBytes(of: &event) {
      control(set, epollControlAdd, descriptor, $0.baseAddress)
    }
    guard added == 0 else {
      close(set)
      return nil
    }
    return readSource(set, handler)
  }

  private static func readSource(_ descriptor: Int32, _ handler: @escaping @MainActor () -> Void)
    -> any DispatchSourceRead
  {
    let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: .main)
    source.setEventHandler {
      MainActor.assumeIsolated {
        source.cancel()
        handler()
      }
    }
    source.setCancelHandler { close(descriptor) }
    source.resume()
    return source
  }

  /// glibc 2.36's `pidfd_open`, looked up at run time so that an older C library only loses
  /// this watch instead of failing to start.
  private static let pidfdOpen: PidfdOpen? = symbol("pidfd_open")

  private typealias PidfdOpen = @convention(c) (pid_t, UInt32) -> Int32

  // Glibc's Swift module leaves out <sys/epoll.h>; the two calls are looked up the same way.
  private static let epollCreate: EpollCreate? = symbol("epoll_create1")
  private static let epollControl: EpollControl? = symbol("epoll_ctl")
  private static let epollControlAdd: Int32 = 1  // EPOLL_CTL_ADD
  private typealias EpollCreate = @convention(c) (Int32) -> Int32
  private typealias EpollControl =
    @convention(c) (Int32, Int32, Int32, UnsafeMutableRawPointer?) -> Int32

  private static func symbol<Function>(_ name: String) -> Function? {
    guard let address = dlsym(dlopen(nil, RTLD_NOW), name) else { return nil }
    return unsafeBitCast(address, to: Function.self)
  }
}
