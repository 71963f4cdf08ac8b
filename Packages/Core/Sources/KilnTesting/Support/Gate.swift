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
  private enum Waiter {
    case pending
    case waiting(CheckedContinuation<Void, any Error>)
    case cancelled
  }

  private struct State {
    var isOpen: Bool
    var nextID: UInt64 = 0
    var waiters: [UInt64: Waiter] = [:]
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
    if Task.isCancelled { throw CancellationError() }
    let id = state.withLock { state in
      state.nextID += 1
      state.waiters[state.nextID] = .pending
      return state.nextID
    }
    do {
      try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
          enum Outcome { case pass, cancel, park }
          let outcome: Outcome = state.withLock { state in
            if case .cancelled = state.waiters[id] {
              state.waiters[id] = nil
              return .cancel
            }
            if state.isOpen {
              state.waiters[id] = nil
              return .pass
            }
            state.waiters[id] = .waiting(continuation)
            waiting.increment()
            return .park
          }
          switch outcome {
          case .pass:
            passed.increment()
            continuation.resume()
          case .cancel:
            continuation.resume(throwing: CancellationError())
          case .park:
            break
          }
        }
      } onCancel: {
        let continuation: CheckedContinuation<Void, any Error>? = state.withLock { state in
          switch state.waiters[id] {
          case .pending:
            state.waiters[id] = .cancelled
            return nil
          case .waiting(let continuation):
            state.waiters[id] = nil
            waiting.decrement()
            return continuation
          case .cancelled, nil:
            return nil
          }
        }
        continuation?.resume(throwing: CancellationError())
      }
    } catch {
      throw CancellationError()
    }
  }

  /// Opens the gate: every parked task goes through, and so do later waiters until
  /// ``close()``.
  public func open() {
    let released: [CheckedContinuation<Void, any Error>] = state.withLock { state in
      state.isOpen = true
      var released: [CheckedContinuation<Void, any Error>] = []
      for (id, waiter) in state.waiters {
        if case .waiting(let continuation) = waiter {
          released.append(continuation)
          state.waiters[id] = nil
        }
      }
      waiting.add(-released.count)
      passed.add(released.count)
      return released
    }
    for continuation in released { continuation.resume() }
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
