/// A one-shot meeting point: the first ``resolve(_:)`` wins, and one waiter gets its value.
///
/// Kiln's one cancellable one-shot wait, and the building block of the operations that must
/// return on time even when the work they started ignores cancellation (KilnQuery's
/// `timeout` and `ParallelPriorityLoader`, KilnNetwork's `AttemptTimeout` and its wait for a
/// credential refresh, KilnStorage's Postgres operation deadline): the work runs in
/// unstructured tasks registered with ``track(_:)``, the caller waits here, and whatever
/// resolves first — a result, a timer, the caller's cancellation — ends the wait and cancels
/// every tracked task without waiting for it.
package final class Race<Value: Sendable>: Sendable {
  // Internal rather than private, and the methods below inlinable, so that a race
  // specialises in the caller's module for its `Value`: unspecialised, every lock and
  // continuation looked up type metadata.
  @usableFromInline
  struct State {
    @usableFromInline var value: Value?
    @usableFromInline var continuation: UnsafeContinuation<Value, Never>?
    @usableFromInline var tasks: [Task<Void, Never>] = []

    @inlinable
    init() {}
  }

  @usableFromInline let state = KilnMutex(State())

  @inlinable
  package init() {}

  /// Tracks a task to cancel once the race is resolved (at once if it already is).
  @inlinable
  package func track(_ task: Task<Void, Never>) {
    let resolved = state.withLock { state in
      if state.value != nil { return true }
      state.tasks.append(task)
      return false
    }
    if resolved { task.cancel() }
  }

  /// Resolves the race with `value` unless it already is.
  ///
  /// - Returns: `true` when this call resolved it.
  @inlinable
  @discardableResult
  package func resolve(_ value: Value) -> Bool {
    let outcome: (UnsafeContinuation<Value, Never>?, [Task<Void, Never>])? = state.withLock { state in
      guard state.value == nil else { return nil }
      state.value = value
      defer {
        state.continuation = nil
        state.tasks = []
      }
      return (state.continuation, state.tasks)
    }
    guard let (continuation, tasks) = outcome else { return false }
    continuation?.resume(returning: value)
    for task in tasks { task.cancel() }
    return true
  }

  /// Waits until the race is resolved; when the waiting task is cancelled first, resolves it
  /// with `cancelled()`.
  ///
  /// - Important: Only one task may wait.
  @inlinable
  package func wait(orWhenCancelled cancelled: @escaping @Sendable () -> Value) async -> Value {
    await withTaskCancellationHandler {
      await withUnsafeContinuation { (continuation: UnsafeContinuation<Value, Never>) in
        let value: Value? = state.withLock { state in
          if let value = state.value { return value }
          precondition(state.continuation == nil, "only one task may wait for a race")
          state.continuation = continuation
          return nil
        }
        if let value { continuation.resume(returning: value) }
      }
    } onCancel: {
      resolve(cancelled())
    }
  }

  /// Runs `operation` within `limit`: its value, `timedOut()` when it has not finished after
  /// `limit` on `clock`, or `cancelled()` at once when the calling task is cancelled.
  ///
  /// The operation and the timer run in unstructured tasks (the operation's starts immediately,
  /// on the calling thread until it first suspends); the loser is cancelled and left to
  /// end on its own, so an operation that ignores cancellation never holds the caller past
  /// the limit (a task group would wait for it).
  package static func run(
    within limit: Duration,
    clock: any Clock<Duration>,
    _ operation: @escaping @Sendable () async -> Value,
    timedOut: @escaping @Sendable () -> Value,
    cancelled: @escaping @Sendable () -> Value
  ) async -> Value {
    let race = Race()
    race.track(startImmediately { race.resolve(await operation()) })
    // An operation that finished before it first suspended needs no timer.
    if !race.isResolved {
      race.track(
        Task {
          do {
            try await clock.sleep(for: limit)
            race.resolve(timedOut())
          } catch {
            // Cancelled: the operation finished first, or the caller was cancelled.
          }
        }
      )
    }
    return await race.wait(orWhenCancelled: cancelled)
  }

  /// Runs `operation` within the limit of `deadlines`: its value, `timedOut()` when it has not
  /// finished when its deadline passes, or `cancelled()` at once when the calling task is
  /// cancelled.
  ///
  /// ``run(within:clock:_:timedOut:cancelled:)`` with a shared timer: the operation runs in an
  /// unstructured task started immediately, and no task sleeps for this call alone.
  @inlinable
  package static func run(
    within deadlines: any Deadlines,
    _ operation: @escaping @Sendable () async -> Value,
    timedOut: @escaping @Sendable () -> Value,
    cancelled: @escaping @Sendable () -> Value
  ) async -> Value {
    let race = Race()
    race.track(startImmediately { race.resolve(await operation()) })
    // An operation that finished before it first suspended needs no deadline.
    if race.isResolved { return await race.wait(orWhenCancelled: cancelled) }
    let ticket = deadlines.schedule { race.resolve(timedOut()) }
    let value = await race.wait(orWhenCancelled: cancelled)
    deadlines.cancel(ticket)
    return value
  }

  /// Whether the race is resolved.
  @inlinable
  package var isResolved: Bool {
    state.withLock { $0.value != nil }
  }

  /// The value of `task`, or `cancelled()` as soon as the calling task is cancelled. The task
  /// itself is not cancelled: others may be waiting for it too.
  package static func value<Success: Sendable>(
    of task: Task<Success, Never>,
    orWhenCancelled cancelled: @escaping @Sendable () -> Value
  ) async -> Value where Value == Success? {
    let race = Race()
    // Cancelling this forwarding task (once the race is resolved) leaves `task` running.
    race.track(Task { race.resolve(await task.value) })
    return await race.wait(orWhenCancelled: cancelled)
  }

  /// Suspends until the calling task is cancelled.
  package static func untilCancelled() async where Value == Void {
    await Race().wait(orWhenCancelled: {})
  }
}

/// A task that starts immediately, running on the calling thread until it first suspends
/// (`Task.immediate`), where the platform has it; a plain task elsewhere. Kiln's one
/// availability switch for it (races, shared loads, PostgreSQL leases).
@inlinable
package func startImmediately(
  _ operation: sending @escaping @isolated(any) () async -> Void
) -> Task<Void, Never> {
  if #available(macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0, *) {
    return Task.immediate(operation: operation)
  }
  return Task(operation: operation)
}
