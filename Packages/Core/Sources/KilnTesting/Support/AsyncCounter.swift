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
  private enum Waiter {
    case pending
    case waiting(threshold: Int, continuation: CheckedContinuation<Void, Never>)
    case cancelled
  }

  private struct State {
    var value = 0
    var nextID: UInt64 = 0
    var waiters: [UInt64: Waiter] = [:]
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
    let ready: [CheckedContinuation<Void, Never>] = state.withLock { state in
      state.value += delta
      var ready: [CheckedContinuation<Void, Never>] = []
      for (id, waiter) in state.waiters {
        if case .waiting(let threshold, let continuation) = waiter, threshold <= state.value {
          ready.append(continuation)
          state.waiters[id] = nil
        }
      }
      return ready
    }
    for continuation in ready { continuation.resume() }
  }

  /// Suspends until the value is at least `threshold`.
  ///
  /// Returns at once when the value is already there, and as soon as the waiting task is
  /// cancelled, so a test can never hang here (check the value afterwards if it matters).
  ///
  /// - Parameter threshold: The value to wait for.
  public func wait(untilAtLeast threshold: Int) async {
    let id = state.withLock { state in
      state.nextID += 1
      state.waiters[state.nextID] = .pending
      return state.nextID
    }
    await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let resumeNow = state.withLock { state in
          if case .cancelled = state.waiters[id] {
            state.waiters[id] = nil
            return true
          }
          if state.value >= threshold {
            state.waiters[id] = nil
            return true
          }
          state.waiters[id] = .waiting(threshold: threshold, continuation: continuation)
          return false
        }
        if resumeNow { continuation.resume() }
      }
    } onCancel: {
      let continuation: CheckedContinuation<Void, Never>? = state.withLock { state in
        switch state.waiters[id] {
        case .pending:
          state.waiters[id] = .cancelled
          return nil
        case .waiting(_, let continuation):
          state.waiters[id] = nil
          return continuation
        case .cancelled, nil:
          return nil
        }
      }
      continuation?.resume()
    }
  }
}
