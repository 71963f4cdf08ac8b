/// The tasks suspended on one of KilnTesting's primitives (a clock's sleepers, a gate's
/// waiters, a counter's waiters), each with the condition it waits for.
///
/// A value type that lives inside its owner's lock and never resumes anything itself: it
/// returns the continuations to resume, which the owner resumes after releasing the lock.
/// It handles the race every such primitive has: a task can be cancelled after it reserved
/// its place but before its continuation is parked (see ``suspend(reserve:park:cancel:)``).
struct WaiterTable<Condition> {
  typealias Continuation = WaiterContinuation

  private enum Phase {
    /// Reserved; the continuation is not parked yet.
    case pending
    /// Parked until its condition holds.
    case waiting(Condition, Continuation)
    /// Cancelled before it was parked: it resumes with `CancellationError` when it parks.
    case cancelled
  }

  private var phases: [UInt64: Phase] = [:]
  private var nextID: UInt64 = 0

  init() {}

  /// The number of parked waiters.
  private(set) var waitingCount = 0

  /// Reserves a place for a task about to wait.
  mutating func reserve() -> UInt64 {
    nextID += 1
    phases[nextID] = .pending
    return nextID
  }

  /// Parks the waiter `id` with `continuation`, unless it was cancelled meanwhile or its
  /// condition already holds.
  mutating func park(_ id: UInt64, until condition: Condition, isSatisfied: Bool, _ continuation: Continuation)
    -> ParkOutcome
  {
    if case .cancelled = phases[id] {
      phases[id] = nil
      return .cancelled
    }
    if isSatisfied {
      phases[id] = nil
      return .ready
    }
    phases[id] = .waiting(condition, continuation)
    waitingCount += 1
    return .parked
  }

  /// Handles the cancellation of the waiter `id`.
  ///
  /// - Returns: Its continuation, to resume with `CancellationError`, when it was parked.
  mutating func cancel(_ id: UInt64) -> Continuation? {
    switch phases[id] {
    case .pending:
      phases[id] = .cancelled
      return nil
    case .waiting(_, let continuation):
      phases[id] = nil
      waitingCount -= 1
      return continuation
    case .cancelled, nil:
      return nil
    }
  }

  /// Removes the parked waiters whose condition `isSatisfied` accepts.
  ///
  /// - Returns: Their conditions and continuations, in the order they were reserved.
  mutating func removeWaiters(where isSatisfied: (Condition) -> Bool) -> [(Condition, Continuation)] {
    var removed: [(UInt64, Condition, Continuation)] = []
    for (id, phase) in phases {
      if case .waiting(let condition, let continuation) = phase, isSatisfied(condition) {
        removed.append((id, condition, continuation))
      }
    }
    for (id, _, _) in removed { phases[id] = nil }
    waitingCount -= removed.count
    return removed.sorted { $0.0 < $1.0 }.map { ($0.1, $0.2) }
  }
}

/// How a waiter of a ``WaiterTable`` is resumed: normally, or with `CancellationError`.
typealias WaiterContinuation = CheckedContinuation<Void, any Error>

/// What parking a waiter did.
enum ParkOutcome {
  /// The waiter is parked until its condition holds.
  case parked
  /// Its condition already held: resume it now.
  case ready
  /// It was cancelled before it parked: resume it with `CancellationError`.
  case cancelled
}

/// Suspends the current task as a waiter of a ``WaiterTable`` guarded by its owner's lock.
///
/// - Parameters:
///   - reserve: Reserves a place in the table (under the owner's lock).
///   - park: Parks the continuation, or says it need not wait (under the owner's lock).
///   - cancel: Handles cancellation; returns the continuation to resume, if parked.
/// - Throws: `CancellationError` when the task is cancelled before or while waiting.
func suspend(
  reserve: () -> UInt64,
  park: (UInt64, WaiterContinuation) -> ParkOutcome,
  cancel: @escaping @Sendable (UInt64) -> WaiterContinuation?
) async throws(CancellationError) {
  if Task.isCancelled { throw CancellationError() }
  let id = reserve()
  do {
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: WaiterContinuation) in
        switch park(id, continuation) {
        case .parked: break
        case .ready: continuation.resume()
        case .cancelled: continuation.resume(throwing: CancellationError())
        }
      }
    } onCancel: {
      cancel(id)?.resume(throwing: CancellationError())
    }
  } catch {
    throw CancellationError()
  }
}
