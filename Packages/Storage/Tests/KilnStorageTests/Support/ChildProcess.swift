import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The crash suite's child: `KilnStorageCrashWriter`, built next to the test bundle.
enum CrashWriter {
  static let name = "KilnStorageCrashWriter"

  /// The executable's path: `$KILN_CRASH_WRITER`, else beside the test bundle.
  static func locate() throws -> String {
    if let path = ProcessInfo.processInfo.environment["KILN_CRASH_WRITER"] { return path }
    var candidates = [URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()]
    for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
      candidates.append(bundle.bundleURL.deletingLastPathComponent())
    }
    for directory in candidates {
      let path = directory.appendingPathComponent(name).path
      if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    Issue.record(
      """
      \(name) was not found next to the test bundle (looked in \(candidates.map(\.path))). \
      Build it with `swift build --build-tests`, or point KILN_CRASH_WRITER at it.
      """)
    throw CrashWriterMissing()
  }

  struct CrashWriterMissing: Error {}
}

/// A child process whose standard output is read line by line.
final class ChildProcess {
  let process = Process()
  private let output = Pipe()
  private var buffer: [UInt8] = []
  private var ended = false

  init(executable: String, arguments: [String]) throws {
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.standardOutput = output
    try process.run()
  }

  var pid: Int32 { process.processIdentifier }

  /// The next line of output, waiting at most `timeout` seconds; `nil` at the end of output.
  func readLine(timeout: Double = 30) throws -> String? {
    let descriptor = output.fileHandleForReading.fileDescriptor
    while true {
      if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
        let line = String(decoding: buffer[..<newline], as: UTF8.self)
        buffer.removeSubrange(...newline)
        return line
      }
      if ended { return nil }
      var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
      let ready = poll(&poller, 1, Int32(timeout * 1_000))
      if ready == 0 { throw ChildTimeout() }
      if ready < 0 {
        if errno == EINTR { continue }
        throw ChildTimeout()
      }
      var chunk = [UInt8](repeating: 0, count: 4_096)
      let count = read(descriptor, &chunk, chunk.count)
      if count <= 0 {
        if count < 0, errno == EINTR { continue }
        ended = true
      } else {
        buffer += chunk[..<count]
      }
    }
  }

  /// Every remaining complete line (after the child has exited).
  func remainingLines() throws -> [String] {
    var lines: [String] = []
    while let line = try readLine(timeout: 10) { lines.append(line) }
    return lines
  }

  /// Sends SIGKILL and reaps the child.
  func kill() {
    _ = Glibc_kill(pid, SIGKILL)
    process.waitUntilExit()
  }

  /// Waits for the child to exit and returns its status.
  func wait() -> Int32 {
    process.waitUntilExit()
    return process.terminationStatus
  }

  struct ChildTimeout: Error {}
}

private func Glibc_kill(_ pid: Int32, _ signal: Int32) -> Int32 {
  kill(pid, signal)
}
