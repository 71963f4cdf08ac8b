// Public: the join path below is inlinable, so its locks are specialised in the caller's module.
public import _KilnSynchronization

/// Holds at most one joinable ``Flight``: the storage behind `serial()` and
/// `staleWhileRevalidate(...)`.
///
/// A caller joins the flight in the slot if it can still be joined, else starts a new one and
/// puts it in the slot. A finished flight removes itself, so a caller arriving after the
/// load has finished starts a new load: nothing is cached.
///
/// A flight that every waiter abandoned stays in the slot until its task ends. A new flight
/// replacing it runs its load only after that (see ``Flight/start(after:_:onFinish:)``), so
/// the slot never has two loads running at once.
@usableFromInline
final class FlightSlot<Success: Sendable, Failure: Error>: Sendable {
  @usableFromInline typealias Output = Result<Success, Failure>

  // `@inlinable` down the join path, with `Flight` and `FlightStateMachine`: see the latter.
  @usableFromInline let current = KilnMutex<Flight<Success, Failure>?>(nil)

  @inlinable
  init() {}

  /// The number of callers waiting for the load in flight; zero when none is.
  var waiterCount: Int {
    current.withLock { $0 }?.waiterCount ?? 0
  }

  /// Whether the load in the slot waits for an abandoned load, still running, to end before
  /// it runs.
  var waitsForAbandonedLoad: Bool {
    current.withLock { $0 }?.waitsForPredecessor ?? false
  }

  /// The priority the load in the slot was asked to run at: its starter's, or a higher
  /// waiter's; `nil` when the slot is empty.
  var loadPriority: TaskPriority? {
    current.withLock { $0 }?.loadPriority
  }

  /// Whether a load is in flight and can be joined.
  var isLoading: Bool {
    current.withLock { $0 }?.isJoinable ?? false
  }

  /// Joins the load in flight, or starts `operation` as a new one, and waits for its outcome.
  @inlinable
  func load(
    _ operation: @escaping @Sendable () async -> Result<Success, Failure>
  ) async -> Result<Success, Failure> {
    await load(making: { operation })
  }

  /// Joins the load in flight, or starts the operation `makeOperation` returns as a new one,
  /// and waits for its outcome.
  ///
  /// Only the caller who starts a load calls `makeOperation`: a caller who joins allocates no
  /// closure (`serial()` built one per caller, an allocation per join).
  @inlinable
  func load(
    making makeOperation: () -> @Sendable () async -> Result<Success, Failure>
  ) async -> Result<Success, Failure> {
    if let cancellation = Flight<Success, Failure>.cancellationIfCancelled { return .failure(cancellation) }
    let admission = current.withLock { current in
      let admission = Flight.admit(to: current)
      if admission.isNew { current = admission.flight }
      return admission
    }
    if admission.isNew {
      admission.flight.start(after: admission.predecessor, makeOperation(), onFinish: remove)
    }
    return await admission.flight.wait(admission.slot)
  }

  /// Starts `operation` in the background unless a load is already in flight, and makes sure
  /// the load in flight runs to its end.
  ///
  /// A background load is never cancelled by callers who join it and are cancelled. When a
  /// joinable load is in flight — also one started by ``load(_:)`` for callers who may all
  /// be cancelled — it becomes such a background load, in the same critical section that
  /// finds it. When the slot only holds an abandoned load still running, the new background
  /// load starts after it.
  ///
  /// - Returns: `true` when a new load started.
  @usableFromInline
  @discardableResult
  func startInBackground(_ operation: @escaping @Sendable () async -> Result<Success, Failure>) -> Bool {
    typealias Started = (flight: Flight<Success, Failure>, predecessor: Flight<Success, Failure>?)
    let started: Started? = current.withLock { current in
      if let flight = current, flight.keepRunningIfJoinable() { return nil }
      let predecessor = current
      let flight = Flight<Success, Failure>(keepsRunningWithoutWaiters: true)
      current = flight
      return (flight, predecessor)
    }
    guard let started else { return false }
    started.flight.start(after: started.predecessor, operation, onFinish: remove)
    return true
  }

  @inlinable
  func remove(_ flight: Flight<Success, Failure>) {
    current.withLock { current in
      if current === flight { current = nil }
    }
  }
}
