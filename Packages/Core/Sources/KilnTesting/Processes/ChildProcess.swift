import Foundation
import _KilnSynchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A child process whose standard output a test reads line by line, with time limits, and
/// which the test can kill at any moment.
///
/// ```swift
/// let child = try ChildProcess(executable: writer, arguments: ["loop", directory.path])
/// while let line = try child.readLine(timeout: .seconds(30)), line != "ready" {}
/// child.kill()                       // SIGKILL: no chance to clean up
/// #expect(try child.remainingLines().allSatisfy { $0.hasPrefix("ack") })
/// ```
///
/// Not `Sendable`: one task drives it.
public final class ChildProcess {
  private let process = Process()
  private let output = Pipe()
  private let errorOutput: Pipe?
  /// The bytes read past the last line returned, and whether the output has ended.
  ///
  /// Behind a lock although one task drives the child: ``nextLine(timeout:)`` reads on a new
  /// thread each time, and the lock is what orders one thread's reads before the next's for
  /// Thread Sanitizer (it does not see the order through the continuation that the task
  /// awaits between them). A read takes the state out, works on its own copy and puts it
  /// back, so the lock is never held while it waits.
  private let state = KilnMutex(ReadState())

  private struct ReadState {
    var buffer: [UInt8] = []
    var ended = false
  }

  /// Starts `executable` with `arguments`.
  ///
  /// - Parameters:
  ///   - executable: The program's path.
  ///   - arguments: Its arguments.
  ///   - capturesStandardError: Whether to keep its standard error for
  ///     ``standardError()`` instead of letting it through to the test's.
  /// - Throws: When the program cannot be started.
  public init(executable: String, arguments: [String] = [], capturesStandardError: Bool = false) throws {
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.standardOutput = output
    errorOutput = capturesStandardError ? Pipe() : nil
    if let errorOutput { process.standardError = errorOutput }
    try process.run()
  }

  /// The child's process identifier.
  public var pid: Int32 {
    process.processIdentifier
  }

  /// The next line of standard output, without its newline.
  ///
  /// - Parameter timeout: How long to wait for a complete line.
  /// - Returns: The line, or `nil` when the output has ended.
  /// - Throws: ``ChildProcessTimeout`` when no line arrives in time.
  public func readLine(timeout: Duration = .seconds(30)) throws(ChildProcessTimeout) -> String? {
    let descriptor = output.fileHandleForReading.fileDescriptor
    let deadline = ContinuousClock.now.advanced(by: timeout)
    var current = state.withLock { state in
      let taken = state
      state = ReadState()
      return taken
    }
    defer { state.withLock { [current] state in state = current } }
    return try Self.readLine(from: descriptor, into: &current, until: deadline, timeout: timeout)
  }

  private static func readLine(
    from descriptor: Int32, into state: inout ReadState, until deadline: ContinuousClock.Instant, timeout: Duration
  ) throws(ChildProcessTimeout) -> String? {
    while true {
      if let newline = state.buffer.firstIndex(of: UInt8(ascii: "\n")) {
        let line = String(decoding: state.buffer[..<newline], as: UTF8.self)
        state.buffer.removeSubrange(...newline)
        return line
      }
      if state.ended { return nil }
      let remaining = ContinuousClock.now.duration(to: deadline)
      guard remaining > .zero else { throw ChildProcessTimeout(timeout: timeout) }
      var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
      let milliseconds = Int32(clamping: remaining.components.seconds * 1_000 + 1)
      let ready = poll(&poller, 1, milliseconds)
      if ready < 0, errno != EINTR { throw ChildProcessTimeout(timeout: timeout) }
      guard ready > 0 else { continue }
      var chunk = [UInt8](repeating: 0, count: 4_096)
      let count = read(descriptor, &chunk, chunk.count)
      if count > 0 {
        state.buffer += chunk[..<count]
      } else if count == 0 || errno != EINTR {
        state.ended = true
      }
    }
  }

  /// The next line of standard output, without its newline, read on a thread of its own.
  ///
  /// Use it from async tests instead of ``readLine(timeout:)``, which blocks its thread
  /// while it waits: a blocked thread of Swift's cooperative pool (two on a two-core machine)
  /// stalls every other task of the test process meanwhile — a database transaction the
  /// process has open among them.
  ///
  /// - Parameter timeout: How long to wait for a complete line.
  /// - Returns: The line, or `nil` when the output has ended.
  /// - Throws: ``ChildProcessTimeout`` when no line arrives in time.
  public func nextLine(timeout: Duration = .seconds(30)) async throws(ChildProcessTimeout) -> String? {
    let child = UncheckedChild(self)
    return try await runOnOwnThread { () throws(ChildProcessTimeout) in try child.process.readLine(timeout: timeout) }
  }

  /// Every remaining line of standard output, up to its end, read on a thread of its own
  /// (see ``nextLine(timeout:)``).
  ///
  /// - Parameter timeout: How long to wait for each line.
  /// - Throws: ``ChildProcessTimeout`` when the output does not end in time.
  public func linesToEnd(timeout: Duration = .seconds(10)) async throws(ChildProcessTimeout) -> [String] {
    var lines: [String] = []
    while let line = try await nextLine(timeout: timeout) { lines.append(line) }
    return lines
  }

  /// Every remaining line of standard output, up to its end.
  ///
  /// - Parameter timeout: How long to wait for each line.
  /// - Throws: ``ChildProcessTimeout`` when the output does not end in time.
  public func remainingLines(timeout: Duration = .seconds(10)) throws(ChildProcessTimeout) -> [String] {
    var lines: [String] = []
    while let line = try readLine(timeout: timeout) { lines.append(line) }
    return lines
  }

  /// Everything the child wrote to standard error, once it has exited (empty unless it was
  /// started with `capturesStandardError`).
  public func standardError() -> String {
    guard let errorOutput else { return "" }
    return String(decoding: errorOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
  }

  /// Kills the child with `SIGKILL` (it gets no chance to clean up) and waits for it.
  ///
  /// - Important: Only the child is killed. Processes it started live on, and on Linux
  ///   Foundation's `Process` waits for them to close the child's output before it reports
  ///   the exit: have a shell child `exec` its last command.
  public func kill() {
    killProcess(pid, SIGKILL)
    process.waitUntilExit()
  }

  /// Waits for the child to exit.
  ///
  /// - Returns: Its exit status (or the signal that ended it).
  @discardableResult
  public func wait() -> Int32 {
    process.waitUntilExit()
    return process.terminationStatus
  }
}

/// A ``ChildProcess`` wrote no complete line in time.
public struct ChildProcessTimeout: Error, Hashable, CustomStringConvertible {
  /// The time limit that passed.
  public var timeout: Duration

  /// Creates the error for a time limit that passed.
  public init(timeout: Duration) {
    self.timeout = timeout
  }

  public var description: String {
    "the child process wrote no complete line within \(timeout)"
  }
}

private func killProcess(_ pid: Int32, _ signal: Int32) {
  _ = kill(pid, signal)
}

/// Hands a ``ChildProcess`` to the thread that reads for the one task driving it, which
/// waits for that thread: never two users at once.
private struct UncheckedChild: @unchecked Sendable {
  let process: ChildProcess

  init(_ process: ChildProcess) {
    self.process = process
  }
}
