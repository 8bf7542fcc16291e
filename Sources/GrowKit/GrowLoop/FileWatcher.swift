internal import CLinux
import Dispatch
import Glibc

/// Calls back on the main thread when file descriptors become readable or writable: from the
/// main queue (the daemon), or from `EpollLoop.run` (the CLI), which then waits on the epoll
/// descriptor itself.
///
/// All descriptors share one epoll instance, and only that instance is a DispatchSource, made
/// once and never cancelled. libdispatch's own per-descriptor sources are not used for
/// descriptors that come and go: on Linux, setting them up and tearing them down at a high rate
/// corrupts libdispatch's epoll bookkeeping and crashes its manager thread
/// (swift-corelibs-libdispatch#949). Here registering and unregistering are plain `epoll_ctl`
/// calls, done at once on the main thread, so a descriptor can be closed right after its watch
/// is cancelled. Nothing polls: the process sleeps until a descriptor is ready.
@MainActor
public final class FileWatcher {
  /// What a watch waits for, and what was found ready.
  public struct Readiness: OptionSet, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let readable = Readiness(rawValue: 1)
    public static let writable = Readiness(rawValue: 2)
    /// The other end is gone (a pipe without readers, a socket shut down). Always watched by
    /// the kernel; ask for it to hear about it on a descriptor you only write to.
    public static let hangUp = Readiness(rawValue: 4)
  }

  /// One registration; cancel it before closing the descriptor.
  @MainActor
  public final class Watch {
    public let descriptor: Int32
    /// What the handler wants to hear about; changing it takes effect at once.
    public var interest: Readiness {
      didSet { if interest != oldValue { watcher?.update(descriptor) } }
    }
    fileprivate let handler: (Readiness) -> Void
    fileprivate weak var watcher: FileWatcher?

    fileprivate init(
      descriptor: Int32, interest: Readiness, watcher: FileWatcher,
      handler: @escaping (Readiness) -> Void
    ) {
      self.descriptor = descriptor
      self.interest = interest
      self.watcher = watcher
      self.handler = handler
    }

    /// Stops watching. Safe to call more than once.
    public func cancel() {
      watcher?.remove(self)
      watcher = nil
    }

    public var isCancelled: Bool { watcher == nil }
  }

  /// The process's watcher, living on the main thread.
  public static let shared = FileWatcher()

  private let epoll: Int32
  /// libdispatch's view of the epoll descriptor; nil once `EpollLoop` took over.
  private var source: (any DispatchSourceRead)?
  /// Several watches may share a descriptor (libdbus watches one socket for reading and for
  /// writing separately); epoll takes each descriptor once, with the union of their interests.
  private var watches: [Int32: [Watch]] = [:]
  /// What epoll holds for each descriptor: the event mask and a registration number, which
  /// epoll hands back with each event. Descriptor numbers are reused as soon as they are
  /// closed; the number tells an event for the file registered now from a stale one already
  /// queued for an earlier file with the same descriptor.
  private var registered: [Int32: (mask: UInt32, id: UInt64)] = [:]
  private var lastRegistrationID: UInt64 = 0
  /// Whether a pass is queued on the main queue for descriptors still ready.
  private var continuationQueued = false
  private var descriptors: [UInt64: Int32] = [:]

  /// Set by `EpollLoop`, which waits on the epoll descriptor itself: then libdispatch is
  /// never given it, and starts no thread of its own to watch it.
  static var isDrivenByCaller = false

  private init() {
    epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
    precondition(epoll >= 0, "epoll_create1 failed: \(String(cString: strerror(errno)))")
    guard !Self.isDrivenByCaller else { return }
    let source = DispatchSource.makeReadSource(fileDescriptor: epoll, queue: .main)
    source.setEventHandler { [unowned(unsafe) self] in
      // A continuation already queued makes the next pass; another now would go before
      // whatever was queued meanwhile.
      MainActor.assumeIsolated { if !self.continuationQueued { self.dispatchReadyDescriptors() } }
    }
    source.resume()
    self.source = source
  }

  /// Runs `EpollLoop.shared` on the calling thread, which must be the main thread: it sleeps
  /// in this epoll itself, and the main queue is no longer served.
  public func runOnMainThread() -> Never {
    EpollLoop.shared.run()
  }

  /// Hands the epoll descriptor to a loop that waits on it itself (`EpollLoop.run`) and
  /// calls `dispatchReadyDescriptors` when it is ready: libdispatch stops watching it.
  func driveFromCaller() -> Int32 {
    Self.isDrivenByCaller = true
    source?.cancel()
    source = nil
    return epoll
  }

  /// Calls `handler` on the main thread whenever `descriptor` is ready for what `interest`
  /// names. A hang-up or error is reported as readable and writable too, so the handler's
  /// next read or write finds out.
  public func watch(
    _ descriptor: Int32, for interest: Readiness, _ handler: @escaping (Readiness) -> Void
  ) -> Watch {
    let watch = Watch(descriptor: descriptor, interest: interest, watcher: self, handler: handler)
    watches[descriptor, default: []].append(watch)
    // The number may belong to a new file: if its last owner closed it without cancelling,
    // the kernel already dropped the old registration. Register afresh (ADD, or MOD on EEXIST)
    // instead of trusting what we recorded for the old one.
    forget(descriptor)
    update(descriptor)
    return watch
  }

  private func remove(_ watch: Watch) {
    watches[watch.descriptor]?.removeAll { $0 === watch }
    update(watch.descriptor)
  }

  /// Brings epoll in line with what the descriptor's watches want. A descriptor nobody wants
  /// anything from is taken out of epoll altogether: the kernel reports errors and hang-ups
  /// whether asked or not, and level-triggered, so an unwanted one would spin the loop.
  private func update(_ descriptor: Int32) {
    let all = watches[descriptor] ?? []
    if all.isEmpty { watches[descriptor] = nil }
    let wanted = all.reduce(Readiness()) { $0.union($1.interest) }
    var mask: UInt32 = 0
    if wanted.contains(.readable) { mask |= EPOLLIN.rawValue | EPOLLRDHUP.rawValue }
    if wanted.contains(.writable) { mask |= EPOLLOUT.rawValue }
    let current = registered[descriptor]
    if wanted.isEmpty {
      if current != nil { _ = epoll_ctl(epoll, EPOLL_CTL_DEL, descriptor, nil) }
      forget(descriptor)
      return
    }
    guard current?.mask != mask else { return }
    let id: UInt64
    if let current {
      id = current.id
    } else {
      lastRegistrationID += 1
      id = lastRegistrationID
    }
    var event = epoll_event()
    event.events = mask
    event.data.u64 = id
    var result = epoll_ctl(
      epoll, current == nil ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, descriptor, &event)
    // A descriptor closed without cancelling its watch left epoll by itself (ENOENT), or its
    // number was reused while epoll still knows it (EEXIST): try the other operation.
    if result != 0, errno == ENOENT || errno == EEXIST {
      result = epoll_ctl(epoll, errno == ENOENT ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, descriptor, &event)
    }
    if result == 0 {
      registered[descriptor] = (mask, id)
      descriptors[id] = descriptor
    } else {
      forget(descriptor)
    }
  }

  /// Drops what we recorded about the descriptor's registration (not epoll's own entry).
  private func forget(_ descriptor: Int32) {
    if let id = registered.removeValue(forKey: descriptor)?.id { descriptors[id] = nil }
  }

  /// Most passes over the ready descriptors in one turn of the main queue, and the time
  /// after which no new pass starts (a pass calls each ready handler once).
  static let passesPerTurn = 16
  static let turnBudget: Double = 0.002

  /// Calls the handlers of every ready descriptor until none is ready. Draining completely
  /// matters: libdispatch may watch the epoll descriptor edge-triggered, and then a descriptor
  /// left ready (a handler that read only part of a pipe) would never be reported again.
  func dispatchReadyDescriptors() {
    var events = [epoll_event](repeating: epoll_event(), count: 64)
    // Bounded in passes and in time, so a busy descriptor cannot starve the rest of the main
    // queue: what is left is picked up on the next turn of the queue, after what was queued
    // meanwhile (a D-Bus call waits for one pass, not sixteen: a compositor's flood parsed 64
    // KiB a pass and held GetStatus for 0.9 s; see Tests/GrowLoopTests/FileWatcherTests).
    let start = MonotonicInstant.systemNow
    for pass in 0..<Self.passesPerTurn {
      if pass > 0, MonotonicInstant.systemNow - start > Self.turnBudget { break }
      let count = events.withUnsafeMutableBufferPointer {
        epoll_wait(epoll, $0.baseAddress, Int32($0.count), 0)
      }
      guard count > 0 else { return }
      for event in events.prefix(Int(count)) {
        // Skip events for registrations that no longer stand (see `registered`).
        let id = event.data.u64
        guard let descriptor = descriptors[id], registered[descriptor]?.id == id else { continue }
        var ready = Readiness()
        let broken = EPOLLHUP.rawValue | EPOLLERR.rawValue
        if event.events & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue | broken) != 0 {
          ready.insert(.readable)
        }
        if event.events & (EPOLLOUT.rawValue | broken) != 0 { ready.insert(.writable) }
        if event.events & broken != 0 { ready.insert(.hangUp) }
        // A handler may cancel watches (its own or others); only call those still here.
        var heard = false
        for watch in watches[descriptor] ?? [] where !watch.isCancelled {
          let relevant = ready.intersection(watch.interest)
          if !relevant.isEmpty {
            heard = true
            watch.handler(relevant)
          }
        }
        // Nobody wanted this (a descriptor closed behind our back, or an error nobody asked
        // about): stop hearing it rather than being told again on every pass.
        if !heard, registered[descriptor]?.id == id {
          _ = epoll_ctl(epoll, EPOLL_CTL_DEL, descriptor, nil)
          forget(descriptor)
        }
      }
    }
    // A loop that waits on the epoll descriptor itself sees it still ready next turn.
    guard source != nil, !continuationQueued else { return }
    // One continuation at a time: the source fires again while one waits, and each pass
    // queued its own, so under a flood the queue filled with passes that a D-Bus call's turn
    // waited behind.
    continuationQueued = true
    DispatchQueue.main.async {
      MainActor.assumeIsolated {
        self.continuationQueued = false
        self.dispatchReadyDescriptors()
      }
    }
  }
}
