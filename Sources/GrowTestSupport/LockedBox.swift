import Foundation

/// A value shared between threads (pipe readers, termination handlers, the test), guarded by
/// one lock. This is what lets the support types be `@unchecked Sendable` honestly: every
/// mutable field they own lives in a `LockedBox`.
public final class LockedBox<Value>: @unchecked Sendable {
  private let lock = NSLock()
  private var value: Value

  public init(_ value: Value) { self.value = value }

  /// Runs `body` with exclusive access to the value.
  public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }

  public var current: Value { withLock { $0 } }
}
