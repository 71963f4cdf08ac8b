import _KilnSynchronization

/// A barrier that holds tasks until the test opens it.
///
/// ```swift
/// let gate = Gate()
/// let work = Task { try await gate.wait(); return 1 }
/// await gate.waitForWaiters(1)   // the task is parked at the gate
/// gate.open()                    // …now let it through
/// ```
///
/// An open gate lets every current and future waiter through until ``close()``.
public final class Gate: Sendable {
  private struct State {
    var isOpen: Bool
    var waiters = WaiterTable<Void>()
  }

  private let state: KilnMutex<State>
  private let waiting = AsyncCounter()
  private let passed = AsyncCounter()

  /// Creates a gate.
  ///
  /// - Parameter isOpen: Whether the gate starts open; closed by default.
  public init(isOpen: Bool = false) {
    state = KilnMutex(State(isOpen: isOpen))
  }

  /// Whether the gate lets waiters through.
  public var isOpen: Bool {
    state.withLock { $0.isOpen }
  }

  /// The number of tasks parked at the gate now.
  public var waiterCount: Int {
    waiting.value
  }

  /// The number of tasks the gate has let through so far.
  public var passedCount: Int {
    passed.value
  }

  /// Suspends until the gate is open.
  ///
  /// - Throws: `CancellationError` when the waiting task is cancelled; it then leaves the
  ///   gate at once.
  public func wait() async throws(CancellationError) {
    try await suspend(
      reserve: { state.withLock { $0.waiters.reserve() } },
      park: { id, continuation in
        let outcome = state.withLock { state in
          let outcome = state.waiters.park(id, until: (), isSatisfied: state.isOpen, continuation)
          if outcome == .parked { waiting.increment() }
          return outcome
        }
        if outcome == .ready { passed.increment() }
        return outcome
      },
      cancel: { [self] id in
        state.withLock { state in
          let continuation = state.waiters.cancel(id)
          if continuation != nil { waiting.decrement() }
          return continuation
        }
      }
    )
  }

  /// Opens the gate: every parked task goes through, and so do later waiters until
  /// ``close()``.
  public func open() {
    let released = state.withLock { state in
      state.isOpen = true
      let released = state.waiters.removeWaiters { true }
      waiting.add(-released.count)
      passed.add(released.count)
      return released
    }
    for (_, continuation) in released { continuation.resume() }
  }

  /// Closes the gate: later waiters park until the next ``open()``.
  public func close() {
    state.withLock { $0.isOpen = false }
  }

  /// Suspends until at least `count` tasks are parked at the gate (or the test is cancelled).
  public func waitForWaiters(_ count: Int) async {
    await waiting.wait(untilAtLeast: count)
  }

  /// Suspends until at least `count` tasks have gone through the gate in all (or the test
  /// is cancelled).
  public func waitForPassed(_ count: Int) async {
    await passed.wait(untilAtLeast: count)
  }
}
