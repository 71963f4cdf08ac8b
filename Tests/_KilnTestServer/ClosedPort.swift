// ClosedPort — a loopback port that refuses every connection and that no other test can take.

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A port on 127.0.0.1 held by a socket that is bound but never listens: a connection to it
/// is refused (`ECONNREFUSED`) for as long as the value lives.
///
/// The port of a stopped server is not that: another test running in parallel can bind the
/// same port a moment later (the system hands freed ports out again), and the connection
/// meant to be refused reaches that test's server instead.
///
/// ```swift
/// let closed = try ClosedPort()
/// defer { closed.close() }
/// let url = URL(string: "http://127.0.0.1:\(closed.port)/")!
/// ```
public final class ClosedPort: Sendable {
  /// The reserved port.
  public let port: Int
  private let descriptor: Int32

  /// Binds a socket to a port on 127.0.0.1, without listening.
  ///
  /// - Parameter port: The port to hold, one a server of the test has just closed (the
  ///   socket allows its connections in `TIME_WAIT`); `0`, the default, for a free one.
  /// - Throws: ``ClosedPortError`` when the system refuses a socket or the port.
  public init(port: Int = 0) throws(ClosedPortError) {
    #if canImport(Darwin)
      let descriptor = socket(AF_INET, SOCK_STREAM, 0)
    #else
      let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #endif
    guard descriptor >= 0 else { throw ClosedPortError(operation: "socket", code: errno) }
    if port != 0 {
      var one: Int32 = 1
      _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
        bind(descriptor, address, length) == 0 && getsockname(descriptor, address, &length) == 0
      }
    }
    guard bound else {
      let code = errno
      _ = closeDescriptor(descriptor)
      throw ClosedPortError(operation: "bind", code: code)
    }
    self.descriptor = descriptor
    self.port = Int(UInt16(bigEndian: address.sin_port))
  }

  /// Gives the port back (once).
  public func close() {
    _ = closeDescriptor(descriptor)
  }
}

/// A ``ClosedPort`` could not be reserved.
public struct ClosedPortError: Error, CustomStringConvertible {
  /// The system call that failed.
  public var operation: String
  /// Its `errno`.
  public var code: Int32

  public var description: String {
    "\(operation) failed with errno \(code)"
  }
}

private func closeDescriptor(_ descriptor: Int32) -> Int32 {
  #if canImport(Darwin)
    Darwin.close(descriptor)
  #elseif canImport(Musl)
    Musl.close(descriptor)
  #else
    Glibc.close(descriptor)
  #endif
}
