import Dispatch
import Foundation
import KilnTesting

/// How long tests wait for something that should happen at once: far beyond any delay a
/// loaded machine under Thread Sanitizer produces, short enough to report a hang.
let defaultTimeout: Double = 20

// Tests collect values sent from any thread in KilnTesting's `Recorder` and wait for them —
// suspending, not blocking — with a timeout, so a failure reports instead of hanging.
//
// Tests suspend rather than block because on Linux the threads that run Swift tasks are
// GCD's global-queue threads (one per core); blocking them starves the very queue that
// `<<~`, `~>>` and the callees under test need, which GCD resolves only by adding a thread
// about once a second.
extension Recorder {
  /// Suspends until at least `count` values arrived.
  ///
  /// - Returns: Whether they did before `timeout` seconds passed.
  @discardableResult
  func wait(forCount count: Int = 1, timeout: Double = defaultTimeout) async -> Bool {
    await waitForCount(count, timeout: .seconds(timeout))
  }

  /// The first value, suspending up to `timeout` seconds for it; `nil` if none came.
  func first(timeout: Double = defaultTimeout) async -> Element? {
    await wait(forCount: 1, timeout: timeout) ? values.first : nil
  }
}

/// Runs `body` asynchronously on `queue` and returns its result, or `nil` if it did not
/// finish within `timeout` seconds (a deadlock reports as a failed expectation). The test
/// suspends meanwhile; only `queue`'s thread blocks.
///
/// Use a serial queue of the test's own (it gets a thread of its own) or the main queue.
func run<Result: Sendable>(
  on queue: DispatchQueue,
  timeout: Double = defaultTimeout,
  _ body: @escaping @Sendable () -> Result
) async -> Result? {
  let recorder = Recorder<Result>()
  queue.async { recorder.append(body()) }
  return await recorder.first(timeout: timeout)
}

/// Runs `body` on a new thread (not a GCD thread, not the main thread) and returns its
/// result, or `nil` if it did not finish within `timeout` seconds.
func runOnNewThread<Result: Sendable>(
  timeout: Double = defaultTimeout,
  _ body: @escaping @Sendable () -> Result
) async -> Result? {
  let recorder = Recorder<Result>()
  Thread { recorder.append(body()) }.start()
  return await recorder.first(timeout: timeout)
}

/// Seconds elapsed since `start` on the uptime clock, the clock GCD timers use.
func seconds(since start: DispatchTime) -> Double {
  Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
}
