#if PostgreSQL
  import _KilnSynchronization

  /// The deadlines of one store's operations in flight, all with the same time limit, kept by
  /// one task that sleeps on the store's clock until the earliest of them, instead of a timer
  /// task per operation (which cost a point read about a tenth of its time).
  ///
  /// A task group cannot bound an operation: it returns only once every child has, and a
  /// statement already sent ignores cancellation (postgres-nio awaits the server's answer
  /// without a cancellation handler). So the deadline does not cancel the operation: it
  /// calls ``OperationLease/expire()``, which closes the connection of the statement in flight
  /// (failing the statement) or ends the wait for a connection.
  ///
  /// The task runs only while an operation is in flight: the first deadline starts it, and it
  /// ends when none is left. Since every deadline is the same limit after its operation
  /// began, a new deadline is never earlier than those already armed, so the task never needs
  /// waking early; it wakes at the earliest deadline armed when it went to sleep, calls the
  /// expiry of every deadline that has passed, and sleeps again until the next.
  final class OperationDeadlines: Sendable {
    /// The time limit of every operation.
    let limit: Duration
    private let clock: any Clock<Duration>
    private let state = KilnMutex(State())

    private struct State {
      var armed: [UInt64: (due: Duration, expire: @Sendable () -> Void)] = [:]
      var nextID: UInt64 = 0
      var isRunning = false
    }

    /// The instant every `due` is measured from: the clock's now when the store opened.
    private let origin: any InstantProtocol<Duration>

    init(limit: Duration, clock: any Clock<Duration>) {
      precondition(limit > .zero, "operation time limits must be positive")
      self.limit = limit
      self.clock = clock
      origin = clock.now
    }

    /// The time since the store opened, on its clock.
    private var elapsed: Duration {
      Self.elapsed(clock, since: origin)
    }

    private static func elapsed<C: Clock<Duration>>(_ clock: C, since origin: any InstantProtocol<Duration>) -> Duration
    {
      (origin as! C.Instant).duration(to: clock.now)
    }

    /// Arms a deadline ``limit`` from now; `expire` runs once it passes, unless
    /// ``disarm(_:)`` came first.
    ///
    /// - Returns: The deadline, to disarm.
    func arm(_ expire: @escaping @Sendable () -> Void) -> UInt64 {
      let due = elapsed + limit
      let (id, start) = state.withLock { state in
        state.nextID &+= 1
        state.armed[state.nextID] = (due, expire)
        defer { state.isRunning = true }
        return (state.nextID, !state.isRunning)
      }
      if start {
        Task { await self.run() }
      }
      return id
    }

    /// Disarms a deadline; its expiry never runs.
    func disarm(_ id: UInt64) {
      _ = state.withLock { $0.armed.removeValue(forKey: id) }
    }

    /// The number of armed deadlines, for tests.
    var armedCount: Int {
      state.withLock { $0.armed.count }
    }

    private func run() async {
      while true {
        let next: Duration? = state.withLock { state in
          guard let earliest = state.armed.values.map(\.due).min() else {
            state.isRunning = false
            return nil
          }
          return earliest
        }
        guard let next else { return }
        let wait = next - elapsed
        if wait > .zero {
          // Not cancellable from outside: a cancelled sleep just wakes the loop early.
          try? await clock.sleep(for: wait)
        }
        let now = elapsed
        let expired: [@Sendable () -> Void] = state.withLock { state in
          let passed = state.armed.filter { $0.value.due <= now }
          for id in passed.keys { state.armed[id] = nil }
          return passed.values.map(\.expire)
        }
        for expire in expired { expire() }
      }
    }
  }
#endif
