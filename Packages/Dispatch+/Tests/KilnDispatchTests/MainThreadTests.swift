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

  static let nestedTargetQueueScenarios = [
    "synchronized-outer-inside-inner",
    "sync-route-to-outer-inside-inner",
    "callback-on-outer-inside-inner",
    "wait-for-callback-on-outer-inside-inner",
    "main-route-inside-queue-targeting-main",
  ]

  /// A regression traps in GCD (`dispatch_sync` on a queue the thread already owns) or
  /// deadlocks: the child process crashes or its watchdog ends it, and this test fails.
  @Test("Calls into a queue from a queue targeting it run inline, also when the inner queue has a token")
  func nestedTargetQueues() throws {
    let probe = try ChildProcess(
      executable: try TestExecutable.locate("KilnDispatchMainThreadProbe"),
      arguments: ["nested-target-queues"],
      capturesStandardError: true
    )
    let lines = try probe.remainingLines(timeout: .seconds(90))
    let status = probe.wait()
    #expect(status == 0, "the probe exited with \(status): \(lines) \(probe.standardError())")
    #expect(lines == Self.nestedTargetQueueScenarios.map { "ok \($0)" })
  }
}
