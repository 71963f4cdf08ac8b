import Dispatch
import Foundation

/// How long tests wait for something that should happen at once: far beyond any delay a
/// loaded machine under Thread Sanitizer produces, short enough to report a hang.
let defaultTimeout: Double = 20

/// Collects values sent from any thread; tests wait for them — suspending, not blocking —
/// with a timeout, so a failure reports instead of hanging.
///
/// Tests suspend rather than block because on Linux the threads that run Swift tasks are
/// GCD's global-queue threads (one per core); blocking them starves the very queue that
/// `<<~`, `~>>` and the callees under test need, which GCD resolves only by adding a thread
/// about once a second.
///
/// `@unchecked Sendable` is sound: the mutable state (`values`, `waiters`, `nextWaiterID`)
/// is only touched under `lock`, an `NSLock` (visible to Thread Sanitizer), and
/// continuations are resumed outside it.
final class Mailbox<Value: Sendable>: @unchecked Sendable {
  private struct Waiter {
    let count: Int
    let continuation: CheckedContinuation<Bool, Never>
  }

  private let lock = NSLock()
  private var values: [Value] = []
  private var waiters: [Int: Waiter] = [:]
  private var nextWaiterID = 0
  private let arrival = DispatchSemaphore(value: 0)

  /// Adds a value and wakes the waiters it satisfies.
  func put(_ value: Value) {
    let ready: [CheckedContinuation<Bool, Never>] = lock.withLock {
      values.append(value)
      let satisfied = waiters.filter { $0.value.count <= values.count }
      for id in satisfied.keys { waiters[id] = nil }
      return satisfied.values.map(\.continuation)
    }
    for continuation in ready { continuation.resume(returning: true) }
    arrival.signal()
  }

  /// Everything received so far, in order.
  var all: [Value] {
    lock.withLock { values }
  }

  /// How many values were received so far.
  var count: Int {
    lock.withLock { values.count }
  }

  /// Suspends until at least `count` values arrived.
  ///
  /// - Returns: Whether they did before `timeout` seconds passed.
  @discardableResult
  func wait(forCount count: Int = 1, timeout: Double = defaultTimeout) async -> Bool {
    await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
      let id: Int? = lock.withLock {
        guard values.count < count else { return nil }
        nextWaiterID += 1
        waiters[nextWaiterID] = Waiter(count: count, continuation: continuation)
        return nextWaiterID
      }
      guard let id else { return continuation.resume(returning: true) }
      DispatchQueue.global().asyncAfter(deadline: .now() + timeout) {
        let expired = self.lock.withLock { self.waiters.removeValue(forKey: id) }
        expired?.continuation.resume(returning: false)
      }
    }
  }

  /// The first value, suspending up to `timeout` seconds for it; `nil` if none came.
  func first(timeout: Double = defaultTimeout) async -> Value? {
    await wait(forCount: 1, timeout: timeout) ? all.first : nil
  }

  /// Blocks the calling thread until at least `count` values arrived — only for code that
  /// already runs on a thread of its own (never in a test's body).
  ///
  /// - Returns: Whether they did before `timeout` seconds passed.
  @discardableResult
  func blockingWait(forCount count: Int = 1, timeout: Double = defaultTimeout) -> Bool {
    let deadline = DispatchTime.now() + timeout
    while self.count < count {
      if arrival.wait(timeout: deadline) == .timedOut { return self.count >= count }
    }
    return true
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
  let mailbox = Mailbox<Result>()
  queue.async { mailbox.put(body()) }
  return await mailbox.first(timeout: timeout)
}

/// Runs `body` on a new thread (not a GCD thread, not the main thread) and returns its
/// result, or `nil` if it did not finish within `timeout` seconds.
func runOnNewThread<Result: Sendable>(
  timeout: Double = defaultTimeout,
  _ body: @escaping @Sendable () -> Result
) async -> Result? {
  let mailbox = Mailbox<Result>()
  Thread { mailbox.put(body()) }.start()
  return await mailbox.first(timeout: timeout)
}

/// Seconds elapsed since `start` on the uptime clock, the clock GCD timers use.
func seconds(since start: DispatchTime) -> Double {
  Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
}
