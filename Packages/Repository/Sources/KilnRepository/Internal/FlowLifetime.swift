import _KilnSynchronization

/// The leases of one param (operations in progress; a leased param is never released),
/// whether it is busy (a fetch in flight or a cache write pending, as its coordinator
/// mirrors), and when it is released once idle: ``releaseDelay`` after the last
/// ``scheduleRelease()``. Read and changed off the coordinator's actor, under one lock.
///
/// One task sleeps until the deadline, and again while later calls move it: the end of a
/// subscription moves a deadline (a lock) instead of cancelling one task and starting
/// another. When the deadline passes unmoved, the task calls the action given to
/// ``onDue(_:)``, which checks that the param is still idle before releasing it.
final class FlowLifetime: Sendable {
  private struct State {
    var leases = 0
    /// A fetch is in flight.
    var fetching = false
    /// A fetch is in flight or a cache write is pending.
    var busy = false
    /// When the release is due, as an offset on ``clock``; `nil` when none is scheduled.
    var deadline: Duration?
    /// A task runs (it sleeps until ``deadline``, again while it moves).
    var running = false
    var action: (@Sendable () async -> Void)?
  }

  let releaseDelay: Duration
  private let clock: ElapsedClock
  private let state = KilnMutex(State())

  init(releaseDelay: Duration, clock: ElapsedClock) {
    self.releaseDelay = releaseDelay
    self.clock = clock
  }

  /// Takes a lease.
  func lease() {
    state.withLock { $0.leases += 1 }
  }

  /// Ends a lease; returns whether it was the last.
  func endLease() -> Bool {
    state.withLock { state in
      state.leases -= 1
      return state.leases == 0
    }
  }

  /// Whether a lease is held.
  var isLeased: Bool {
    state.withLock { $0.leases > 0 }
  }

  /// Mirrors the coordinator's activity.
  func setActivity(fetching: Bool, busy: Bool) {
    state.withLock { state in
      state.fetching = fetching
      state.busy = busy
    }
  }

  /// The last subscriber left: schedules the release when nothing is busy or leased.
  ///
  /// - Parameter cancelsAbandonedFetch: Whether a fetch nobody waits for is cancelled.
  /// - Returns: Whether a fetch is in flight that the coordinator must cancel first (it then
  ///   schedules the release itself once idle).
  func lastSubscriberLeft(cancelsAbandonedFetch: Bool) -> Bool {
    let (fetching, idle) = state.withLock { ($0.fetching, !$0.busy && $0.leases == 0) }
    if fetching, cancelsAbandonedFetch { return true }
    // A subscriber arriving now finds the release not due: it checks again that the param
    // is idle and unused.
    if idle { scheduleRelease() }
    return false
  }

  /// Sets what runs when a release falls due.
  func onDue(_ action: @escaping @Sendable () async -> Void) {
    state.withLock { $0.action = action }
  }
  /// Whether a release is scheduled and not yet due: one scheduled again after the due one
  /// moved it, which the due one must leave to its own deadline.
  var isReleaseScheduled: Bool {
    state.withLock { $0.deadline != nil }
  }

  /// Schedules the release ``releaseDelay`` from now, replacing any earlier deadline.
  func scheduleRelease() {
    let deadline = clock.elapsed() + releaseDelay
    let start = state.withLock { state in
      state.deadline = deadline
      guard !state.running else { return false }
      state.running = true
      return true
    }
    if start { Task { await self.run() } }
  }

  private func run() async {
    while true {
      let deadline = state.withLock { state in
        if state.deadline == nil { state.running = false }
        return state.deadline
      }
      guard let deadline else { return }
      if clock.elapsed() < deadline {
        do {
          try await clock.sleepUntil(deadline)
        } catch {
          // Never cancelled; should it be, the next schedule starts a new task.
          state.withLock { $0.running = false }
          return
        }
        continue
      }
      // Due, unless moved meanwhile.
      let action: (@Sendable () async -> Void)? = state.withLock { state in
        guard state.deadline == deadline else { return nil }
        state.deadline = nil
        return state.action
      }
      if let action { await action() }
    }
  }
}
