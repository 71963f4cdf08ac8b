/// The state of one shared in-flight load: who waits for it, whether it can still be joined,
/// and its outcome once it has one.
///
/// A value type that only decides: every method mutates the state and returns what the caller
/// (``Flight``) must do outside its lock — resume continuations, cancel the task. It never
/// resumes or cancels anything itself, so no user code and no continuation runs under a lock.
///
/// ## Waiters
///
/// Each waiter owns one slot, addressed by its index, and goes through two steps: it *joins*
/// (``join()``, under the registry's lock, so joining and finding the flight are atomic) and
/// then *registers* its continuation (``register(_:continuation:)``). Cancellation can strike
/// between the two, so a slot can be cancelled before it has a continuation.
///
/// A cancelled waiter whose `Failure` can hold a `CancellationError` is *detached*: it is
/// resumed at once with that error and stops counting. One whose `Failure` cannot hold it stays
/// in its slot and gets the flight's outcome — but stops counting as interested. When no
/// interested waiter is left, the flight becomes unjoinable and its task is cancelled (unless
/// it keeps running without waiters, as a background refresh does).
///
/// ## Priority
///
/// The load's task starts with the priority of the caller who started it. A waiter with a
/// higher priority raises it (``register(_:continuation:priority:)`` and
/// ``started(_:priority:)`` return the task to escalate), as awaiting the task directly would.
///
/// ## Successors
///
/// A flight that was abandoned (unjoinable) may still be running: its upstream may ignore
/// cancellation. The registry then starts the next flight *after* it, and that successor
/// waits for it to end (``awaitEnd(_:)``) before it runs its own load, so that two loads of
/// one registry entry never overlap.
///
/// ## Inlinable
///
/// The join path (``join()``, ``register(_:continuation:priority:)``, ``started(_:priority:)``,
/// ``finish(_:)``, ``cancel(_:detachingWith:)``) is `@inlinable`, with ``Flight`` and
/// ``FlightSlot``, so that it specialises in the caller's module for the caller's `Success` and
/// `Failure`: unspecialised, every critical section looked up generic metadata (9% of joining
/// a `serial()` load). Library evolution is off, so this fixes no ABI.
@usableFromInline
struct FlightStateMachine<Success: Sendable, Failure: Error> {
  @usableFromInline typealias Output = Result<Success, Failure>
  @usableFromInline typealias Continuation = UnsafeContinuation<Output, Never>

  @usableFromInline
  enum Slot {
    /// Joined; the continuation is not registered yet.
    case joined
    /// Registered and suspended.
    case waiting(Continuation)
    /// Cancelled before registering: resume with this failure when it registers.
    case detached(Failure)
    /// Resumed (or about to be): nothing more to do for this slot.
    case done
  }

  // Internal rather than private, for the inlinable methods; only this type's methods write them.
  @usableFromInline var slots: [Slot] = []
  /// Waiters that have not been cancelled and not been resumed.
  @usableFromInline var interestedWaiters = 0
  /// Whether a new waiter may still join.
  @usableFromInline var isJoinable = true
  @usableFromInline var outcome: Output?
  @usableFromInline var task: Task<Void, Never>?
  @usableFromInline var cancelWhenStarted = false
  @usableFromInline var keepsRunningWithoutWaiters: Bool
  /// Successor flights waiting for this one to end.
  @usableFromInline var successors: [Continuation] = []
  /// Whether the load waits for the flight before it to end before it runs.
  @usableFromInline var waitsForPredecessor = false
  /// The highest priority the load was asked to run at: its starter's, or a waiter's above it.
  @usableFromInline var priority: TaskPriority?
  /// The task of the caller running the load inline, while it runs it (``SharedLoads``'
  /// inline loads): a waiter with a higher priority raises it, under the flight's lock. The
  /// leader clears it, under the same lock (``finish(_:)``, ``handOver()``), before its task
  /// can end.
  @usableFromInline var leader: LeaderTask?

  /// Creates the state of a flight that has not started.
  ///
  /// - Parameter keepsRunningWithoutWaiters: `true` for a flight nobody waits for at first
  ///   (a background refresh): cancelling its waiters never cancels it.
  @inlinable
  init(keepsRunningWithoutWaiters: Bool) {
    self.keepsRunningWithoutWaiters = keepsRunningWithoutWaiters
  }

  /// The number of waiters that joined and have not been resumed or detached, the leader of
  /// an inline load included.
  var waiterCount: Int {
    slots.reduce(leader == nil ? 0 : 1) { count, slot in
      switch slot {
      case .joined, .waiting: count + 1
      case .detached, .done: count
      }
    }
  }

  /// Adds a waiter.
  ///
  /// - Returns: The waiter's slot, or `nil` when the flight has finished or was abandoned.
  @inlinable
  mutating func join() -> Int? {
    guard isJoinable else { return nil }
    slots.append(.joined)
    interestedWaiters += 1
    return slots.count - 1
  }

  /// Makes the flight run to its end even when every waiter is cancelled, as a background
  /// load does — but only while it can still be joined.
  ///
  /// - Returns: `true` when the flight is joinable, and from now on keeps running without
  ///   waiters; `false` when it was abandoned or has finished.
  mutating func keepRunning() -> Bool {
    guard isJoinable else { return false }
    keepsRunningWithoutWaiters = true
    return true
  }

  /// Whether the flight has its outcome.
  var hasEnded: Bool {
    outcome != nil
  }

  /// Registers a successor waiting for this flight to end.
  ///
  /// - Returns: The outcome, to resume `continuation` with at once, when the flight has
  ///   already ended; `nil` when `continuation` was kept and ``finish(_:)`` hands it back.
  mutating func awaitEnd(_ continuation: Continuation) -> Output? {
    if let outcome { return outcome }
    successors.append(continuation)
    return nil
  }

  /// Records that the load waits for the flight before it to end.
  @inlinable
  mutating func waitForPredecessor() {
    waitsForPredecessor = true
  }

  /// Records that the flight before this one has ended.
  ///
  /// - Returns: Whether the load must run now: `false` when this flight was abandoned
  ///   meanwhile, so that nobody is interested in a new load.
  mutating func predecessorEnded() -> Bool {
    waitsForPredecessor = false
    return isJoinable
  }

  @usableFromInline
  enum StartAction {
    case none
    case cancel(Task<Void, Never>)
    /// Raise the task's priority: a waiter with a higher one registered before it started.
    case escalate(Task<Void, Never>, to: TaskPriority)
  }

  /// Records the task running the load.
  ///
  /// - Parameter priority: The priority the task was created with.
  @inlinable
  mutating func started(_ task: Task<Void, Never>, priority: TaskPriority) -> StartAction {
    if cancelWhenStarted { return .cancel(task) }
    guard outcome == nil else { return .none }
    self.task = task
    if let requested = self.priority, requested > priority { return .escalate(task, to: requested) }
    self.priority = priority
    return .none
  }

  @usableFromInline
  enum RegisterAction {
    /// Suspend; first raise the priority of the task, when there is one, to the waiter's.
    case suspend(escalating: Task<Void, Never>?)
    case resume(Output)
  }

  /// Registers the continuation of the waiter in `slot`.
  ///
  /// A waiter with a higher priority than an inline load's ``leader`` raises the leader's
  /// here, under the flight's lock: the only place where the leader's task is known to run.
  ///
  /// - Parameter priority: The waiting task's priority.
  @inlinable
  mutating func register(_ slot: Int, continuation: Continuation, priority: TaskPriority) -> RegisterAction {
    switch slots[slot] {
    case .joined:
      if let outcome {
        slots[slot] = .done
        return .resume(outcome)
      }
      slots[slot] = .waiting(continuation)
      if let leader, self.priority == nil { self.priority = leader.task.priority }
      if let current = self.priority, current >= priority { return .suspend(escalating: nil) }
      self.priority = priority
      if let leader { Flight<Success, Failure>.escalate(leader.task, to: priority) }
      return .suspend(escalating: task)
    case .detached(let cancellation):
      slots[slot] = .done
      return .resume(.failure(cancellation))
    case .waiting, .done:
      preconditionFailure("a flight waiter registered twice")
    }
  }

  @usableFromInline
  struct CancelAction {
    @usableFromInline var resume: (Continuation, Output)?
    @usableFromInline var cancelTask: Task<Void, Never>?

    @inlinable
    init() {}
  }

  /// Handles the cancellation of the waiter in `slot`.
  ///
  /// - Parameter cancellation: The failure that detaches the waiter, or `nil` when its
  ///   `Failure` cannot represent cancellation (it then waits for the outcome).
  @inlinable
  mutating func cancel(_ slot: Int, detachingWith cancellation: Failure?) -> CancelAction {
    var action = CancelAction()
    switch slots[slot] {
    case .done, .detached:
      return action
    case .joined:
      if outcome != nil { return action }  // it will find the outcome when it registers
      if let cancellation { slots[slot] = .detached(cancellation) }
    case .waiting(let continuation):
      if let cancellation {
        slots[slot] = .done
        action.resume = (continuation, .failure(cancellation))
      }
    }
    interestedWaiters -= 1
    if interestedWaiters == 0, !keepsRunningWithoutWaiters, isJoinable {
      isJoinable = false
      if let task {
        action.cancelTask = task
        self.task = nil
      } else {
        cancelWhenStarted = true
      }
    }
    return action
  }

  /// Makes the flight of the callers who joined an inline load (which keeps running without
  /// waiters while its leader runs it) into an ordinary flight, about to start a load of its
  /// own: cancelled once no interested waiter is left.
  ///
  /// - Returns: `true` when interested waiters are left to start the load for; `false` when
  ///   none is (the flight is then finished with the leader's outcome).
  @usableFromInline
  mutating func handOver() -> Bool {
    leader = nil
    guard interestedWaiters > 0 else { return false }
    keepsRunningWithoutWaiters = false
    return true
  }

  /// Makes the flight unjoinable and asks for its task to be cancelled, whoever waits for it.
  ///
  /// - Returns: The task to cancel, if it has started.
  mutating func abandon() -> Task<Void, Never>? {
    guard outcome == nil else { return nil }
    isJoinable = false
    guard let task else {
      cancelWhenStarted = true
      return nil
    }
    self.task = nil
    return task
  }

  /// Records the outcome of the load.
  ///
  /// - Returns: The continuations to resume with `outcome`: the waiters' and the successors'.
  @inlinable
  mutating func finish(_ outcome: Output) -> [Continuation] {
    precondition(self.outcome == nil, "a flight finished twice")
    self.outcome = outcome
    isJoinable = false
    task = nil
    leader = nil
    interestedWaiters = 0
    var continuations: [Continuation] = []
    continuations.reserveCapacity(slots.count + successors.count)
    for index in slots.indices {
      if case .waiting(let continuation) = slots[index] {
        continuations.append(continuation)
        slots[index] = .done
      }
    }
    continuations += successors
    successors = []
    return continuations
  }
}

/// The task of the caller who runs an inline load (``FlightStateMachine/leader``,
/// ``FlightSlot/State/leader``): the address of the reference inside its `UnsafeCurrentTask`,
/// unretained.
///
/// An address, not the `UnsafeCurrentTask`: every copy of one retains and releases the task,
/// and a lone caller of `serial()` paid two of each per load (a third of its own cost,
/// profiled); a trivial value also keeps the states holding it free of value witnesses.
// @unchecked: an `UnsafeCurrentTask` is not `Sendable` because it is valid only while its task
// runs. This one is made into a task only under the flight's (or slot's) lock, and its leader
// clears it, under that lock, before its task can end.
@usableFromInline
struct LeaderTask: @unchecked Sendable {
  @usableFromInline let address: UnsafeRawPointer

  /// The leader `task`, or `nil` without a task.
  @inlinable
  init?(_ task: UnsafeCurrentTask?) {
    // The same bits: `Optional<UnsafeCurrentTask>` is one reference, `nil` when null.
    guard let address = unsafeBitCast(task, to: UnsafeRawPointer?.self) else { return nil }
    self.address = address
  }

  /// The leader whose address is `bits` (from ``bits``).
  @inlinable
  init(address bits: UInt) {
    address = UnsafeRawPointer(bitPattern: bits)!
  }

  /// The task's address as an integer: never `0`, and a multiple of 16.
  @inlinable
  var bits: UInt { UInt(bitPattern: address) }

  /// The task. Use it only under the lock that holds the leader, and only there.
  @inlinable
  var task: UnsafeCurrentTask {
    unsafeBitCast(address, to: UnsafeCurrentTask.self)
  }
}
