/// Deadlines of one fixed length on one clock, all served by one timer task: what a stage that
/// puts the same limit on many operations (KilnNetwork's `AttemptTimeout`) uses instead of a
/// sleeping task per operation.
///
/// ``schedule(_:)`` costs a lock and an append: the deadline is `limit` from now, so deadlines
/// arrive in order and the queue is a FIFO. One task sleeps until the earliest live deadline,
/// calls the actions whose deadlines have passed, and ends when no deadline is left (the next
/// ``schedule(_:)`` starts another). ``cancel(_:)`` drops an action at once, so what it
/// captures is released when the operation ends, not when its deadline would have passed.
///
/// A sleeping task per operation costs two task allocations, a timer registration and, on
/// Linux, about 800 bytes that a cancelled `Task.sleep` keeps until its deadline: a server
/// with a 30 s limit and 1,000 requests a second would hold 24 MB of them.
package protocol Deadlines: Sendable {
  /// The length of every deadline.
  var limit: Duration { get }

  /// Calls `action` once ``limit`` has passed from now, unless ``cancel(_:)`` comes first.
  ///
  /// - Returns: The ticket that cancels it.
  func schedule(_ action: @escaping @Sendable () -> Void) -> DeadlineTicket

  /// Drops the action of `ticket`, unless it was called already.
  func cancel(_ ticket: DeadlineTicket)
}

/// What cancels one scheduled deadline.
package struct DeadlineTicket: Sendable, Hashable {
  let id: UInt64
}

/// Makes the deadline queue of `limit` on `clock`.
package func makeDeadlines(limit: Duration, clock: any Clock<Duration>) -> any Deadlines {
  DeadlineQueue(limit: limit, clock: clock)
}

/// ``Deadlines`` on any clock.
///
/// Not generic over its clock: deadlines are kept as durations since the queue was made, and
/// the clock is an ``ElapsedClock``, so that scheduling and cancelling run no generic code.
package final class DeadlineQueue: Deadlines {
  private struct Entry {
    /// The deadline, as the time since the queue was made.
    let deadline: Duration
    let id: UInt64
    /// `nil` once called or cancelled.
    var action: (@Sendable () -> Void)?
  }

  private struct State {
    /// Deadlines in the order they were scheduled (and so of their instants); those before
    /// `head` are done.
    var entries: [Entry] = []
    var head = 0
    var nextID: UInt64 = 0
    /// Whether a timer task is running (sleeping, or calling actions).
    var isRunning = false

    /// Drops the entries at the head whose actions were called or cancelled, and reclaims
    /// the space before the head once it is most of the array.
    mutating func dropDoneHead() {
      while head < entries.count, entries[head].action == nil { head += 1 }
      if head == entries.count {
        entries.removeAll(keepingCapacity: true)
        head = 0
      } else if head >= 64, head * 2 >= entries.count {
        entries.removeFirst(head)
        head = 0
      }
    }
  }

  package let limit: Duration
  /// The clock, measured from when the queue was made.
  private let clock: ElapsedClock
  private let state = KilnMutex(State())

  /// Creates a queue of deadlines `limit` from when each is scheduled, measured on `clock`.
  package init(limit: Duration, clock: any Clock<Duration>) {
    self.limit = limit
    self.clock = ElapsedClock(clock)
  }

  /// The number of deadlines scheduled and neither called nor cancelled.
  package var pendingCount: Int {
    state.withLock { state in state.entries[state.head...].count { $0.action != nil } }
  }

  /// Whether a timer task is running.
  package var isRunning: Bool {
    state.withLock { $0.isRunning }
  }

  package func schedule(_ action: @escaping @Sendable () -> Void) -> DeadlineTicket {
    let (ticket, startsTimer) = state.withLock { state in
      state.nextID += 1
      // Read under the lock, so that the entries' deadlines are in order.
      state.entries.append(Entry(deadline: clock.elapsed() + limit, id: state.nextID, action: action))
      defer { state.isRunning = true }
      return (DeadlineTicket(id: state.nextID), !state.isRunning)
    }
    if startsTimer {
      // Detached: the timer serves every caller, and inherits none's task-local values.
      Task.detached { await self.runTimer() }
    }
    return ticket
  }

  package func cancel(_ ticket: DeadlineTicket) {
    let dropped: (@Sendable () -> Void)? = state.withLock { state in
      // Entries are in the order of their IDs.
      var low = state.head
      var high = state.entries.count
      while low < high {
        let middle = (low + high) / 2
        if state.entries[middle].id < ticket.id { low = middle + 1 } else { high = middle }
      }
      guard low < state.entries.count, state.entries[low].id == ticket.id else { return nil }
      let action = state.entries[low].action
      state.entries[low].action = nil
      state.dropDoneHead()
      return action
    }
    // Released outside the lock: what the action captures may run a deinit.
    _ = dropped
  }

  /// Calls the actions whose deadlines have passed, sleeping until the next; ends when none
  /// is left.
  private func runTimer() async {
    while true {
      var due: [@Sendable () -> Void] = []
      let next: Duration? = state.withLock { state in
        let now = clock.elapsed()
        while state.head < state.entries.count {
          let entry = state.entries[state.head]
          if let action = entry.action {
            guard entry.deadline <= now else { break }
            due.append(action)
            state.entries[state.head].action = nil
          }
          state.head += 1
        }
        state.dropDoneHead()
        guard state.head < state.entries.count else {
          state.isRunning = false
          return nil
        }
        return state.entries[state.head].deadline
      }
      for action in due { action() }
      guard let next else { return }
      // Never cancelled: the task ends when no deadline is left.
      try? await clock.sleepUntil(next)
    }
  }
}
