import Foundation
import Glibc

/// A listening Unix stream socket, for the stand-ins of compositors' IPC (HyprlandStandIn,
/// SwayStandIn).
enum UnixListener {
  static func listen(at path: String) throws -> Int32 {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
      throw HarnessError("socket path too long: \(path)")
    }
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
    let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    guard descriptor >= 0, bound == 0, Glibc.listen(descriptor, 16) == 0 else {
      throw HarnessError("cannot listen on \(path): \(String(cString: strerror(errno)))")
    }
    return descriptor
  }
}
