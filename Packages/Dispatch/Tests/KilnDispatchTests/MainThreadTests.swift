import KilnTesting
import Testing

/// Async → sync waits on the process's real main thread with callbacks delivered through the
/// main queue. Swift Testing on Linux runs no test on the main thread, so the scenarios run
/// in `KilnDispatchMainThreadProbe`, a child process whose top-level code is on it.
@Suite("Waiting on the real main thread", .timeLimit(.minutes(2)))
struct MainThreadTests {
  static let scenarios = [
    "main-wait-main-callback",
    "global-call-main-callback",
    "inline-call-delayed-main-callback",
    "arity-2",
    "arity-4",
    "worker-main-sync-while-main-waits",
    "wait-for-callback-with-timeout",
    "callback-called-twice",
  ]

  @Test("async → sync from the main thread with callbacks delivered on main completes")
  func mainThreadWaits() throws {
    let probe = try ChildProcess(
      executable: try TestExecutable.locate("KilnDispatchMainThreadProbe"), capturesStandardError: true)
    let lines = try probe.remainingLines(timeout: .seconds(90))
    let status = probe.wait()
    #expect(status == 0, "the probe exited with \(status): \(lines) \(probe.standardError())")
    #expect(lines == Self.scenarios.map { "ok \($0)" })
  }
}
