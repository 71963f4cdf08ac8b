import Foundation
import KilnTesting

#if canImport(Glibc)
  import Glibc
#endif

/// A plain TCP connection to 127.0.0.1 with blocking POSIX calls, each run on a thread of its
/// own (never on one of the few threads of Swift's cooperative pool): it sees exactly the
/// bytes, the end-of-file and the reset a peer sends.
final class RawConnection: @unchecked Sendable {
  /// How a read ended.
  enum Ending: Equatable, CustomStringConvertible {
    /// The requested bytes arrived.
    case complete
    /// The peer closed its side (end-of-file).
    case endOfFile
    /// The peer reset the connection.
    case reset
    /// Nothing more arrived within the read's time limit; the connection is still open.
    case silent

    var description: String {
      switch self {
      case .complete: "complete"
      case .endOfFile: "end of file"
      case .reset: "reset"
      case .silent: "silent"
      }
    }
  }

  struct ConnectFailed: Error, Equatable {
    var errno: Int32
  }

  private let descriptor: Int32

  private init(descriptor: Int32) {
    self.descriptor = descriptor
  }

  deinit {
    close(descriptor)
  }

  /// Connects to 127.0.0.1:`port`.
  ///
  /// - Throws: ``ConnectFailed`` with the `errno` of `connect` (`ECONNREFUSED`).
  static func connect(port: Int) async throws -> RawConnection {
    try await onThread {
      let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
      guard descriptor >= 0 else { throw ConnectFailed(errno: errno) }
      var address = sockaddr_in()
      address.sin_family = sa_family_t(AF_INET)
      address.sin_port = in_port_t(UInt16(port).bigEndian)
      address.sin_addr.s_addr = inet_addr("127.0.0.1")
      let result = withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
      guard result == 0 else {
        let failure = errno
        close(descriptor)
        throw ConnectFailed(errno: failure)
      }
      return RawConnection(descriptor: descriptor)
    }
  }

  /// Sends `bytes` (blocking until the kernel took them all).
  func send(_ bytes: [UInt8]) async throws {
    let descriptor = self.descriptor
    try await Self.onThread {
      var offset = 0
      while offset < bytes.count {
        let sent = bytes[offset...].withUnsafeBytes {
          Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
        }
        guard sent > 0 else { throw ConnectFailed(errno: errno) }
        offset += sent
      }
    }
  }

  /// Sends `text` as UTF-8.
  func send(_ text: String) async throws {
    try await send(Array(text.utf8))
  }

  /// Closes the sending direction (the peer reads end-of-file); reading goes on.
  func shutdownWriting() {
    shutdown(descriptor, Int32(SHUT_WR))
  }

  /// Reads until `count` bytes arrived, the peer closed or reset the connection, or nothing
  /// arrived for `silence`.
  func receive(upTo count: Int = .max, silence: Duration = .seconds(10)) async -> (bytes: [UInt8], ending: Ending) {
    let descriptor = self.descriptor
    return await Self.onThread {
      var received: [UInt8] = []
      let ending = Self.read(descriptor, into: &received, silence: silence) { $0.count >= count }
      return (received, ending)
    }
  }

  /// Reads one HTTP/1.1 response whose head announces `Content-Length`: its head and body.
  func receiveResponse(silence: Duration = .seconds(10)) async -> (head: String, body: [UInt8], ending: Ending) {
    let descriptor = self.descriptor
    return await Self.onThread {
      var bytes: [UInt8] = []
      let separator = Array("\r\n\r\n".utf8)
      var ending = Self.read(descriptor, into: &bytes, silence: silence) { $0.firstRange(of: separator) != nil }
      guard let end = bytes.firstRange(of: separator) else {
        return (String(decoding: bytes, as: UTF8.self), [], ending)
      }
      let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self)
      let length =
        head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
        .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
      let bodyStart = end.upperBound
      if bytes.count - bodyStart < length {
        ending = Self.read(descriptor, into: &bytes, silence: silence) { $0.count - bodyStart >= length }
      }
      return (head, Array(bytes[bodyStart...]), ending)
    }
  }

  /// Reads into `received` until `done` holds, end-of-file, a reset or `silence` without a byte.
  private static func read(
    _ descriptor: Int32, into received: inout [UInt8], silence: Duration, until done: ([UInt8]) -> Bool
  ) -> Ending {
    var timeout = timeval(
      tv_sec: Int(silence.components.seconds), tv_usec: Int(silence.components.attoseconds / 1_000_000_000_000))
    setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    while !done(received) {
      let read = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
      if read > 0 {
        received += buffer[0..<read]
      } else if read == 0 {
        return .endOfFile
      } else if errno == EINTR {
        continue
      } else if errno == EAGAIN || errno == EWOULDBLOCK {
        return .silent
      } else {
        return .reset
      }
    }
    return .complete
  }

  private static func onThread<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws
    -> Result
  {
    try await runOnOwnThread(body)
  }

  private static func onThread<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
    await runOnOwnThread(body)
  }
}
