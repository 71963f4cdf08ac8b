import _KilnSynchronization

/// A counter that tasks can wait on until it reaches a threshold.
///
/// The building block behind ``ManualClock/waitForSleepers(count:)``,
/// ``SpyQuery/waitForLoads(_:)`` and ``Gate/waitForWaiters(_:)``: code under test bumps
/// the counter, the test suspends (without polling or sleeping) until it is high enough.
///
/// ```swift
/// let started = AsyncCounter()
/// let work = Task { started.increment(); await doWork() }
/// await started.wait(untilAtLeast: 1)
/// ```
public final class AsyncCounter: Sendable {
  private struct State {
    var value = 0
    var waiters = WaiterTable<Int>()
  }

  private let state: KilnMutex<State>

  /// Creates a counter.
  ///
  /// - Parameter value: The starting value.
  public init(_ value: Int = 0) {
    state = KilnMutex(State(value: value))
  }

  /// The current value.
  public var value: Int {
    state.withLock { $0.value }
  }

  /// Adds one.
  public func increment() {
    add(1)
  }

  /// Subtracts one.
  public func decrement() {
    add(-1)
  }

  /// Adds `delta` (which may be negative) and wakes the waiters whose threshold is reached.
  public func add(_ delta: Int) {
    let ready = state.withLock { state in
      state.value += delta
      let value = state.value
      return state.waiters.removeWaiters { threshold in threshold <= value }
    }
    for (_, continuation) in ready { continuation.resume() }
  }

  /// Suspends until the value is at least `threshold`.
  ///
  /// Returns at once when the value is already there, and as soon as the waiting task is
  /// cancelled, so a test can never hang here (check the value afterwards if it matters).
  ///
  /// - Parameter threshold: The value to wait for.
  public func wait(untilAtLeast threshold: Int) async {
    try? await suspend(
      reserve: { state.withLock { $0.waiters.reserve() } },
      park: { id, continuation in
        state.withLock { state in
          state.waiters.park(id, until: threshold, isSatisfied: state.value >= threshold, continuation)
        }
      },
      cancel: { [self] id in state.withLock { $0.waiters.cancel(id) } }
    )
  }
}
