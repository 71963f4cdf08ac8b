// Public: the load and join paths below are inlinable, so the slot's atomic word and its locks
// are specialised in the caller's module.
public import Synchronization
public import _KilnSynchronization

/// Holds at most one load in flight: the storage behind `serial()` and
/// `staleWhileRevalidate(...)`.
///
/// A caller joins the load in the slot if it can still be joined, else starts a new one. A
/// finished load leaves the slot, so a caller arriving after the load has finished starts a
/// new load: nothing is cached.
///
/// ## Two ways to run a load
///
/// - **In a flight's own task** (``load(making:)``, ``startInBackground(_:)``): cancelling one
///   caller never cancels the load; it is cancelled when its last interested caller is.
/// - **Inline, in the first caller's task** (``loadInline(_:)``, what `serial()` does):
///   a caller who finds the slot empty runs the load itself, as a plain call would, and pays
///   no task. Callers arriving meanwhile join a ``Flight`` that the leader finishes with its
///   outcome. Cancelling the leader cancels its load (it runs in the leader's task); when the
///   load then fails while callers still wait, they get a new load, in a task of its own, rather
///   than the leader's cancellation.
///
/// A flight that every waiter abandoned stays in the slot until its task ends. A new flight
/// replacing it runs its load only after that (see ``Flight/start(after:_:onFinish:)``), so
/// the slot never has two loads running at once. An inline load never starts while the slot
/// holds a flight, and a new load for the callers who joined it starts only once it has ended.
///
/// ## A caller alone takes no lock
///
/// ``word`` lets a caller who finds the slot empty lead, and end its load when no one joined,
/// with one compare-and-exchange each instead of a critical section each:
///
/// - `0`: the slot is empty (no flight, no leader);
/// - the address of a task (never `0` or ``busy``: a task is aligned): that task leads an
///   inline load nobody has seen, and the locked ``State`` still says the slot is empty;
/// - ``busy``: ``State`` says everything. It is the value while the lock is held, and after a
///   critical section that left the slot holding a flight or a leader.
///
/// Every critical section (``withState(_:)``) first takes the word to ``busy``: an unseen
/// leader becomes ``State/leader`` (it then finds ``busy`` when it ends, and ends under the
/// lock), and an empty slot can take no new leader until the section ends. It ends by
/// storing `0` when the slot is empty, else ``busy``. So a leader ending alone swaps its
/// address for `0`, and one that was seen ends as any leader does: the ending cannot miss a
/// joiner, and a new leader cannot start while a flight is in the slot.
@usableFromInline
final class FlightSlot<Success: Sendable, Failure: Error>: Sendable {
  @usableFromInline typealias Output = Result<Success, Failure>

  @usableFromInline
  struct State {
    /// The flight callers join: a load in its own task, or (while ``leads``) the callers
    /// waiting for the inline load; `nil` when no one waits.
    @usableFromInline var flight: Flight<Success, Failure>?
    /// Whether a caller runs the load inline now.
    @usableFromInline var leads = false
    /// The raw value of the priority the inline load runs at, as its joiners know it: read
    /// from the leader's task by the first joiner, raised by those with a higher one; 0 until
    /// a caller joins.
    @usableFromInline var inlinePriority: UInt8 = 0
    /// The task of the caller running the load inline (while ``leads``), for joiners to raise
    /// its priority.
    @usableFromInline var leader: LeaderTask?

    @inlinable
    init() {}
  }

  // `@inlinable` down the join path, with `Flight` and `FlightStateMachine`: see the latter.
  @usableFromInline let state = KilnMutex<State>(State())

  /// `0`, the address of a leader nobody has seen, or ``busy``: see the type's documentation.
  @usableFromInline let word = Atomic<UInt>(0)

  /// The value of ``word`` while ``state`` says everything.
  @inlinable
  static var busy: UInt { 1 }

  /// Runs `body` under the lock, with an unseen leader recorded in the state first, and
  /// publishes whether the slot is empty when it ends. Every critical section goes through
  /// it.
  @inlinable
  func withState<Result>(_ body: (inout State) -> Result) -> Result {
    state.withLock { state in
      var current = word.load(ordering: .acquiring)
      while current != Self.busy {
        let (exchanged, original) = word.compareExchange(
          expected: current, desired: Self.busy, ordering: .acquiringAndReleasing)
        if exchanged {
          if current != 0 {
            // A leader who took the empty slot without the lock: from now on it ends under it.
            state.leads = true
            state.inlinePriority = 0
            state.leader = LeaderTask(address: current)
          }
          break
        }
        current = original  // the leader ended (0), or one just started
      }
      let result = body(&state)
      word.store(state.flight == nil && !state.leads ? 0 : Self.busy, ordering: .releasing)
      return result
    }
  }

  @inlinable
  init() {}

  /// The priority the inline load runs at: its leader's, or a higher one a joiner raised it
  /// to. Call it under the lock, while `state.leads`.
  @inlinable
  func leaderPriority(_ state: inout State) -> TaskPriority? {
    if state.inlinePriority == 0, let priority = state.leader?.task.priority {
      state.inlinePriority = priority.rawValue
    }
    return state.inlinePriority == 0 ? nil : TaskPriority(rawValue: state.inlinePriority)
  }

  /// The number of callers waiting for the load in flight, the leader of an inline load
  /// included; zero when none is.
  var waiterCount: Int {
    let (leads, flight) = withState { ($0.leads, $0.flight) }
    return (leads ? 1 : 0) + (flight?.waiterCount ?? 0)
  }

  /// Whether the load in the slot waits for an abandoned load, still running, to end before
  /// it runs.
  var waitsForAbandonedLoad: Bool {
    withState { $0.flight }?.waitsForPredecessor ?? false
  }

  /// The priority the load in the slot was asked to run at: its starter's, or a higher
  /// waiter's; `nil` when the slot is empty.
  var loadPriority: TaskPriority? {
    let (inlinePriority, flight) = withState { state -> (TaskPriority?, Flight<Success, Failure>?) in
      (state.leads ? leaderPriority(&state) : nil, state.flight)
    }
    return inlinePriority ?? flight?.loadPriority
  }

  /// Whether a load is in flight and can be joined.
  var isLoading: Bool {
    let (leads, flight) = withState { ($0.leads, $0.flight) }
    return leads || (flight?.isJoinable ?? false)
  }

  /// Joins the load in flight, or starts `operation` as a new one, and waits for its outcome.
  @inlinable
  func load(
    _ operation: @escaping @Sendable () async -> Result<Success, Failure>
  ) async -> Result<Success, Failure> {
    await load(making: { operation })
  }

  /// Joins the load in flight, or starts the operation `makeOperation` returns as a new one
  /// in a task of its own, and waits for its outcome.
  ///
  /// Only the caller who starts a load calls `makeOperation`: a caller who joins allocates no
  /// closure (`serial()` built one per caller, an allocation per join).
  @inlinable
  func load(
    making makeOperation: () -> @Sendable () async -> Result<Success, Failure>
  ) async -> Result<Success, Failure> {
    if let cancellation = Flight<Success, Failure>.cancellationIfCancelled { return .failure(cancellation) }
    let priority = Task.currentPriority
    let admission = withState { state in admit(&state, priority: priority) }
    return await wait(admission, making: makeOperation)
  }

  /// Joins the load in flight or, when the slot is empty, loads `upstream` inline in the
  /// calling task while later callers join it; returns the outcome.
  ///
  /// When this caller cannot lead (the slot holds an abandoned load this one must start
  /// after), or when it led, was cancelled and failed while callers still wait, the load
  /// runs in a task of its own instead.
  ///
  /// Generic over the query rather than taking a closure, so that it specialises and inlines
  /// into `serial()`'s caller: the load path of a caller alone is two compare-and-exchanges
  /// of ``word`` around the upstream's own load (see "A caller alone takes no lock").
  ///
  /// `@concurrent`, like the upstream's `load()` it calls: one executor check on entering it,
  /// and none around the upstream's load. As `nonisolated(nonsending)` it ran on its caller's
  /// executor and so switched to the generic executor for the upstream's load and back after
  /// it, two checks per load (a lone caller's miss through a five-decorator pipeline:
  /// 125 ns, against 118 ns now; `serial()`'s own `load()` runs on the generic executor
  /// anyway).
  @inlinable
  @concurrent func loadInline<Upstream: Query>(
    _ upstream: Upstream
  ) async -> Result<Success, Failure> where Upstream.Success == Success, Upstream.Failure == Failure {
    // One look at the current task, inside which one critical section decides: lead (keeping
    // the task for joiners to raise its priority), or join (a joiner's priority is read in it,
    // which costs a leader nothing). Inside the closure, the task is not copied out of it (a
    // copy is a retain and a release of the task).
    let start = withUnsafeCurrentTask { startInline($0) }
    let unseenLeader: UInt
    switch start {
    case .lead(let address): unseenLeader = address
    case .join(let admission): return await join(upstream, admission)
    case .cancelled(let cancellation): return .failure(cancellation)
    }
    FlightProbe.report(.joined)
    FlightProbe.report(.started)
    FlightProbe.report(.waiting)
    let outcome: Result<Success, Failure>
    do throws(Failure) {
      outcome = .success(try await upstream.load())
    } catch {
      outcome = .failure(error)
    }
    // Nobody saw this leader: nobody joined, and the slot is empty again.
    if unseenLeader != 0,
      word.compareExchange(expected: unseenLeader, desired: 0, ordering: .acquiringAndReleasing).exchanged
    {
      FlightProbe.report(.ended)
      return outcome
    }
    // Whether the callers who joined need a load of their own: the leader was cancelled and
    // its load failed (perhaps because of it).
    let needsHandOver: Bool
    if case .failure = outcome { needsHandOver = Task.isCancelled } else { needsHandOver = false }
    let ending: InlineEnding? = withState { state in
      state.leads = false
      state.leader = nil
      guard let flight = state.flight else { return nil }
      if needsHandOver, flight.handOver() {
        return .restart(flight)  // stays in the slot: it runs a load of its own now
      }
      state.flight = nil
      return .finish(flight)
    }
    if let ending { end(ending, with: outcome, making: { { await upstream.result() } }) }
    FlightProbe.report(.ended)
    return outcome
  }

  /// The path of ``loadInline(_:)`` for a caller who does not lead: it waits for the load it
  /// joined, or starts the one it made in a task of its own. Not inlined, so that the
  /// leader's path keeps one suspension point and a small frame.
  @inlinable
  @inline(never)
  nonisolated(nonsending) func join<Upstream: Query>(
    _ upstream: Upstream,
    _ admission: Flight<Success, Failure>.Admission
  ) async -> Result<Success, Failure> where Upstream.Success == Success, Upstream.Failure == Failure {
    await wait(admission, making: { { await upstream.result() } })
  }

  /// Hands the callers who joined an inline load its outcome, or starts their own load.
  @usableFromInline
  func end(
    _ ending: InlineEnding,
    with outcome: Result<Success, Failure>,
    making makeOperation: () -> @Sendable () async -> Result<Success, Failure>
  ) {
    switch ending {
    case .finish(let flight): flight.finish(outcome)
    case .restart(let flight): flight.start(makeOperation(), onFinish: remove)
    }
  }

  /// Decides how a caller of ``loadInline(_:)`` running in `task` goes on.
  @inlinable
  func startInline(_ task: UnsafeCurrentTask?) -> InlineStart {
    if task?.isCancelled ?? false, let cancellation = CancellationError() as? Failure {
      return .cancelled(cancellation)
    }
    let leader = LeaderTask(task)
    // The slot is empty: lead without the lock.
    if let leader, word.compareExchange(expected: 0, desired: leader.bits, ordering: .acquiringAndReleasing).exchanged {
      return .lead(leader.bits)
    }
    let admission: Flight<Success, Failure>.Admission? = withState { state in
      guard state.flight == nil, !state.leads else {
        return admit(&state, priority: Task.currentPriority)
      }
      state.leads = true
      state.inlinePriority = 0
      state.leader = leader
      return nil
    }
    if let admission { return .join(admission) }
    return .lead(0)
  }

  /// How a caller of ``loadInline(_:)`` goes on.
  @usableFromInline
  enum InlineStart {
    /// It runs the load: unseen, with its task's address in ``FlightSlot/word``, or (`0`)
    /// recorded in the state.
    case lead(UInt)
    /// It waits for the load it was admitted to.
    case join(Flight<Success, Failure>.Admission)
    /// Its task was cancelled before it began.
    case cancelled(Failure)
  }

  /// What the leader of an inline load does with the callers who joined it.
  @usableFromInline
  enum InlineEnding {
    /// Hand them the outcome.
    case finish(Flight<Success, Failure>)
    /// Start a load of their own: the leader was cancelled and failed.
    case restart(Flight<Success, Failure>)
  }

  /// Decides, under the slot's lock, how a caller who does not lead waits: it joins the
  /// callers of the inline load (raising its priority to the caller's), joins the flight in
  /// the slot, or makes a new flight.
  @inlinable
  func admit(_ state: inout State, priority: TaskPriority) -> Flight<Success, Failure>.Admission {
    if state.leads {
      let flight: Flight<Success, Failure>
      if let joiners = state.flight {
        flight = joiners
      } else {
        // The leader keeps the load running: callers who give up never cancel it.
        flight = Flight(keepsRunningWithoutWaiters: true)
        state.flight = flight
      }
      if let current = leaderPriority(&state), priority > current, let task = state.leader?.task {
        state.inlinePriority = priority.rawValue
        // Under the lock: the leader's task cannot end before the leader clears `state.leader`.
        Flight<Success, Failure>.escalate(task, to: priority)
      }
      // The leader finishes this flight before it can end, so it is still joinable.
      let slot = flight.join()!
      FlightProbe.report(.joined)
      return Flight.Admission(flight: flight, slot: slot, isNew: false, predecessor: nil)
    }
    let admission = Flight.admit(to: state.flight)
    if admission.isNew { state.flight = admission.flight }
    return admission
  }

  /// Starts the admitted flight when it is new, then waits for its outcome.
  @inlinable
  nonisolated(nonsending) func wait(
    _ admission: Flight<Success, Failure>.Admission,
    making makeOperation: () -> @Sendable () async -> Result<Success, Failure>
  ) async -> Result<Success, Failure> {
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
  /// load starts after it. An inline load counts as in flight: its leader runs it to its end
  /// unless the leader is cancelled.
  ///
  /// - Returns: `true` when a new load started.
  @usableFromInline
  @discardableResult
  func startInBackground(_ operation: @escaping @Sendable () async -> Result<Success, Failure>) -> Bool {
    typealias Started = (flight: Flight<Success, Failure>, predecessor: Flight<Success, Failure>?)
    let started: Started? = withState { state in
      if state.leads { return nil }
      if let flight = state.flight, flight.keepRunningIfJoinable() { return nil }
      let predecessor = state.flight
      let flight = Flight<Success, Failure>(keepsRunningWithoutWaiters: true)
      state.flight = flight
      return (flight, predecessor)
    }
    guard let started else { return false }
    started.flight.start(after: started.predecessor, operation, onFinish: remove)
    return true
  }

  @inlinable
  func remove(_ flight: Flight<Success, Failure>) {
    withState { state in
      if state.flight === flight { state.flight = nil }
    }
  }
}
