// Public: the join path below is inlinable, so its locks are specialised in the caller's module.
public import _KilnSynchronization

/// One load shared by every caller that joins it while it runs.
///
/// The load runs in its own unstructured task (started immediately, on the caller's thread
/// until it first suspends), so that cancelling one waiter never cancels
/// it; it is cancelled only when its last interested waiter is (see ``FlightStateMachine``).
/// Each waiter first joins (``join()``), then awaits the outcome (``wait(_:)``).
///
/// The registries that hand flights out — ``FlightSlot``, ``SharedLoads`` and ``Paginator`` —
/// join under their own lock, so a caller either joins a flight that has not finished or
/// finds none and starts the next one: a caller is never left waiting for an outcome that
/// was already delivered.
///
/// A registry keeps a flight until it ends, also once it can no longer be joined: when every
/// waiter was cancelled but the upstream ignores cancellation, the flight is abandoned yet
/// still running. The next caller then starts a new flight *after* it
/// (``start(after:_:onFinish:)``): the new flight can be joined at once, but runs its load
/// only when the abandoned one has ended, so one registry entry never has two loads running.
/// Its callers wait at most for the rest of the abandoned load and their own.
///
/// The join path (``admit(to:)``, ``start(after:_:onFinish:)``, ``wait(_:)``) is `@inlinable`
/// so that it specialises in the caller's module (see ``FlightStateMachine``).
@usableFromInline
final class Flight<Success: Sendable, Failure: Error>: Sendable {
  @usableFromInline typealias Output = Result<Success, Failure>

  @usableFromInline let state: KilnMutex<FlightStateMachine<Success, Failure>>

  /// Creates a flight that has not started.
  ///
  /// - Parameter keepsRunningWithoutWaiters: `true` for a background load that must not be
  ///   cancelled when the callers who joined it are.
  @inlinable
  init(keepsRunningWithoutWaiters: Bool = false) {
    state = KilnMutex(FlightStateMachine(keepsRunningWithoutWaiters: keepsRunningWithoutWaiters))
  }

  /// Creates the flight of a load that `leader`'s task runs inline (``SharedLoads``' inline
  /// loads): callers who join it and are cancelled never cancel it, and it has no task of its
  /// own unless its leader hands it over (``handOver()``).
  ///
  /// - Important: The leader must end the flight, with ``finish(_:)`` or ``handOver()``,
  ///   before its task can end.
  @inlinable
  init(leader: LeaderTask) {
    var machine = FlightStateMachine<Success, Failure>(keepsRunningWithoutWaiters: true)
    machine.leader = leader
    state = KilnMutex(machine)
  }

  /// Whether a new waiter may still join.
  var isJoinable: Bool {
    state.withLock { $0.isJoinable }
  }

  /// The number of callers waiting for the outcome now.
  var waiterCount: Int {
    state.withLock { $0.waiterCount }
  }

  /// Whether the flight has its outcome.
  var hasEnded: Bool {
    state.withLock { $0.hasEnded }
  }

  /// Whether the load waits for an abandoned flight before it to end before it runs.
  var waitsForPredecessor: Bool {
    state.withLock { $0.waitsForPredecessor }
  }

  /// Pins a joinable flight, so that cancelling its waiters never cancels it: what starting a
  /// background load does when it finds a load in flight.
  ///
  /// - Returns: `true` when the flight could still be joined and now runs to its end; `false`
  ///   when it was abandoned or has finished.
  @usableFromInline
  func keepRunningIfJoinable() -> Bool {
    state.withLock { $0.keepRunning() }
  }

  /// Adds a waiter; `nil` when the flight has finished or was abandoned.
  @inlinable
  func join() -> Int? {
    state.withLock { $0.join() }
  }

  /// What ``admit(to:)`` decided for one caller: the flight to wait for, the caller's waiter
  /// slot in it, and — when the flight is new — the flight it replaces.
  @usableFromInline
  struct Admission {
    /// The flight the caller waits for.
    @usableFromInline let flight: Flight
    /// The caller's waiter slot, for ``wait(_:)``.
    @usableFromInline let slot: Int
    /// Whether `flight` was made for this caller: the registry stores it and starts it.
    @usableFromInline let isNew: Bool
    /// The flight `flight` replaces (abandoned, maybe still running); `nil` when none.
    @usableFromInline let predecessor: Flight?

    @inlinable
    init(flight: Flight, slot: Int, isNew: Bool, predecessor: Flight?) {
      self.flight = flight
      self.slot = slot
      self.isNew = isNew
      self.predecessor = predecessor
    }
  }

  /// The one join-or-start rule of every registry (``FlightSlot``, ``SharedLoads``,
  /// ``Paginator``): join `current` while it can still be joined, else make a new flight that
  /// replaces it and runs only after it (``start(after:_:onFinish:)``).
  ///
  /// Call it under the registry's lock and, when the admission ``Admission/isNew``, store the
  /// new flight in the same critical section; start it after leaving the lock.
  ///
  /// - Parameter current: The flight the registry holds for this load, if any.
  /// - Returns: The flight to wait for and the caller's slot in it.
  @inlinable
  static func admit(to current: Flight?) -> Admission {
    if let current, let slot = current.join() {
      FlightProbe.report(.joined)
      return Admission(flight: current, slot: slot, isNew: false, predecessor: nil)
    }
    let flight = Flight()
    let slot = flight.join()!
    FlightProbe.report(.joined)
    return Admission(flight: flight, slot: slot, isNew: true, predecessor: current)
  }

  /// Starts the load in a new task, once `predecessor` has ended. The task starts immediately
  /// (`Task.immediate`, where the platform has it): it runs on the calling thread until it
  /// first suspends.
  ///
  /// - Parameters:
  ///   - predecessor: The flight the registry held before this one — abandoned, but maybe still
  ///     running — or `nil`. The load waits for it to end, whatever its outcome. When this
  ///     flight is itself abandoned before that, its load never runs: its remaining waiters
  ///     (those whose `Failure` cannot hold a `CancellationError`) get the predecessor's
  ///     outcome instead.
  ///   - operation: The load. It runs at most once, in a task that inherits the caller's
  ///     priority and task-local values.
  ///   - onFinish: Called after every waiter has been handed the outcome: the registry drops
  ///     the flight there.
  @inlinable
  func start(
    after predecessor: Flight? = nil,
    _ operation: @escaping @Sendable () async -> Output,
    onFinish: @escaping @Sendable (Flight) -> Void = { _ in }
  ) {
    if predecessor != nil {
      state.withLock { $0.waitForPredecessor() }
    }
    let priority = Task.currentPriority
    let body: @Sendable () async -> Void = {
      let outcome: Output
      if let predecessor, let inherited = await self.inheritedOutcome(after: predecessor) {
        outcome = inherited
      } else {
        outcome = await operation()
      }
      self.finish(outcome)
      onFinish(self)
      FlightProbe.report(.ended)
    }
    // Started immediately: the load runs on the caller's thread until it first suspends, so
    // a load that never suspends (a cache hit) has its outcome before the caller waits, and
    // one that does saves the hop to a new task's first job.
    let task = startImmediately(body)
    switch state.withLock({ $0.started(task, priority: priority) }) {
    case .none: break
    case .cancel(let task): task.cancel()
    case .escalate(let task, let priority): Self.escalate(task, to: priority)
    }
    FlightProbe.report(.started)
  }

  /// Waits for the outcome as the waiter in `slot`.
  ///
  /// When the calling task is cancelled, a `Failure` that can hold a `CancellationError`
  /// (`any Error`) is returned at once; otherwise the waiter keeps waiting for the outcome,
  /// which comes soon: when no interested waiter is left, the load itself is cancelled.
  ///
  /// A waiter whose priority is higher than the load's raises the load's to its own (where
  /// the platform can: Linux, and Apple platforms from the 26 releases).
  @inlinable
  func wait(_ slot: Int) async -> Output {
    let priority = Task.currentPriority
    return await withTaskCancellationHandler {
      await withUnsafeContinuation { (continuation: UnsafeContinuation<Output, Never>) in
        switch state.withLock({ $0.register(slot, continuation: continuation, priority: priority) }) {
        case .suspend(let task):
          if let task { Self.escalate(task, to: priority) }
        case .resume(let outcome): continuation.resume(returning: outcome)
        }
        FlightProbe.report(.waiting)
      }
    } onCancel: {
      let action = state.withLock { $0.cancel(slot, detachingWith: CancellationError() as? Failure) }
      if let (continuation, outcome) = action.resume {
        continuation.resume(returning: outcome)
      }
      action.cancelTask?.cancel()
      FlightProbe.report(.left)
    }
  }

  /// Cancels the load whoever waits for it; the flight can no longer be joined. Its waiters
  /// get whatever the cancelled load returns.
  func cancel() {
    state.withLock { $0.abandon() }?.cancel()
  }

  /// The failure a caller already cancelled gets without joining, when `Failure` can hold a
  /// `CancellationError`.
  @inlinable
  static var cancellationIfCancelled: Failure? {
    Task.isCancelled ? CancellationError() as? Failure : nil
  }

  /// The priority the load was asked to run at: its starter's, or a higher waiter's.
  var loadPriority: TaskPriority? {
    state.withLock { $0.priority }
  }

  /// Raises the priority of the load's task to `priority`, where the platform can.
  @usableFromInline
  static func escalate(_ task: Task<Void, Never>, to priority: TaskPriority) {
    if #available(macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0, *) {
      task.escalatePriority(to: priority)
    }
  }

  /// Raises the priority of the current task of an inline load's leader to `priority`,
  /// where the platform can.
  ///
  /// - Important: Call it only while the leader's task is known to run: under the
  ///   ``FlightSlot``'s lock, while the slot names it as the leader.
  @usableFromInline
  static func escalate(_ task: UnsafeCurrentTask, to priority: TaskPriority) {
    if #available(macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0, *) {
      task.escalatePriority(to: priority)
    }
  }

  /// Turns the flight of the callers who joined an inline load into one that runs a load of
  /// its own, when its leader was cancelled and failed (see ``FlightStateMachine/handOver()``).
  ///
  /// - Returns: `true` when interested callers wait: start the flight's load for them.
  @usableFromInline
  func handOver() -> Bool {
    state.withLock { $0.handOver() }
  }

  /// Waits for `predecessor` to end, whatever its outcome.
  ///
  /// Not cancellable: running the load before the predecessor has ended is what successors
  /// exist to prevent, and the predecessor's task always ends.
  ///
  /// - Returns: The predecessor's outcome when this flight was abandoned meanwhile (its load
  ///   must not run); `nil` when its load must run.
  @usableFromInline
  func inheritedOutcome(after predecessor: Flight) async -> Output? {
    let outcome = await withUnsafeContinuation { (continuation: UnsafeContinuation<Output, Never>) in
      if let outcome = predecessor.state.withLock({ $0.awaitEnd(continuation) }) {
        continuation.resume(returning: outcome)
      }
    }
    return state.withLock { $0.predecessorEnded() } ? nil : outcome
  }

  @inlinable
  func finish(_ outcome: Output) {
    let continuations = state.withLock { $0.finish(outcome) }
    for continuation in continuations {
      continuation.resume(returning: outcome)
    }
  }
}
