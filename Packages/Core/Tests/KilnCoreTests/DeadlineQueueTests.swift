import KilnTesting
import Synchronization
import Testing
import _KilnSynchronization

/// Counts calls, and whether the object an action captured is still alive.
private final class Calls: Sendable {
  let count = Atomic<Int>(0)
  func call() { count.add(1, ordering: .relaxed) }
  var value: Int { count.load(ordering: .relaxed) }
}

/// How many times each action was called, by its number.
private final class CallsByID: Sendable {
  private let counts = KilnMutex<[Int: Int]>([:])
  func call(_ id: Int) { counts.withLock { $0[id, default: 0] += 1 } }
  var value: [Int: Int] { counts.withLock { $0 } }
}

/// Something an action captures, whose release a weak reference sees.
private final class Captured: Sendable {}

@Suite("DeadlineQueue: one timer task for deadlines of one length", .timeLimit(.minutes(1)))
struct DeadlineQueueTests {
  @Test("an action is called once its limit has passed, not before, and once")
  func firesAtTheLimit() async {
    let clock = ManualClock()
    let deadlines = DeadlineQueue(limit: .seconds(10), clock: clock)
    let calls = Calls()
    _ = deadlines.schedule { calls.call() }
    await clock.waitForSleepers(count: 1)
    clock.advance(by: .seconds(9))
    await Task.yield()
    #expect(calls.value == 0)
    clock.advance(by: .seconds(1))
    #expect(await poll(timeout: .seconds(10)) { calls.value == 1 })
    clock.advance(by: .seconds(60))
    #expect(await poll(timeout: .seconds(10)) { !deadlines.isRunning })
    #expect(calls.value == 1)
    #expect(deadlines.pendingCount == 0)
  }

  @Test("a cancelled deadline never calls its action, and releases what it captured at once")
  func cancelReleases() async {
    let clock = ManualClock()
    let deadlines = DeadlineQueue(limit: .seconds(30), clock: clock)
    let calls = Calls()
    weak var released: Captured?
    let ticket: DeadlineTicket = {
      let captured = Captured()
      released = captured
      return deadlines.schedule { [captured] in
        _ = captured
        calls.call()
      }
    }()
    #expect(released != nil)
    deadlines.cancel(ticket)
    #expect(released == nil, "the action is held until its deadline")
    #expect(deadlines.pendingCount == 0)
    clock.advance(by: .seconds(60))
    #expect(await poll(timeout: .seconds(10)) { !deadlines.isRunning })
    #expect(calls.value == 0)
    // Cancelling twice, or after the deadline, does nothing.
    deadlines.cancel(ticket)
  }

  @Test("deadlines scheduled later fire later, each at its own limit")
  func inOrder() async {
    let clock = ManualClock()
    let deadlines = DeadlineQueue(limit: .seconds(10), clock: clock)
    let first = Calls()
    let second = Calls()
    _ = deadlines.schedule { first.call() }
    await clock.waitForSleepers(count: 1)
    clock.advance(by: .seconds(4))
    _ = deadlines.schedule { second.call() }
    clock.advance(by: .seconds(6))  // 10 s after the first, 6 s after the second
    #expect(await poll(timeout: .seconds(10)) { first.value == 1 })
    await clock.waitForSleepers(count: 1)
    #expect(second.value == 0)
    clock.advance(by: .seconds(4))
    #expect(await poll(timeout: .seconds(10)) { second.value == 1 })
    #expect(first.value == 1)
  }

  @Test("the timer ends when no deadline is left, and the next deadline starts another")
  func timerRestarts() async {
    let clock = ManualClock()
    let deadlines = DeadlineQueue(limit: .seconds(1), clock: clock)
    let calls = Calls()
    for round in 1...3 {
      _ = deadlines.schedule { calls.call() }
      await clock.waitForSleepers(count: 1)
      clock.advance(by: .seconds(1))
      #expect(await poll(timeout: .seconds(10)) { calls.value == round && !deadlines.isRunning })
    }
  }

  @Test("10,000 deadlines from 100 tasks, half cancelled: each other one fires exactly once")
  func stress() async {
    let clock = ManualClock()
    let deadlines = DeadlineQueue(limit: .seconds(5), clock: clock)
    let fired = CallsByID()
    await withTaskGroup(of: Void.self) { group in
      for worker in 0..<100 {
        group.addTask {
          for index in 0..<100 {
            let id = worker * 100 + index
            let ticket = deadlines.schedule { fired.call(id) }
            if id.isMultiple(of: 2) { deadlines.cancel(ticket) }
          }
        }
      }
    }
    #expect(deadlines.pendingCount == 5_000)
    await clock.waitForSleepers(count: 1)
    clock.advance(by: .seconds(5))
    #expect(await poll(timeout: .seconds(10)) { fired.value.count == 5_000 })
    #expect(await poll(timeout: .seconds(10)) { !deadlines.isRunning })
    let counts = fired.value
    #expect(counts.keys.allSatisfy { !$0.isMultiple(of: 2) })
    #expect(counts.values.allSatisfy { $0 == 1 })
    #expect(deadlines.pendingCount == 0)
  }

  @Test("Race.run(within:) returns at the deadline when the operation ignores cancellation")
  func raceTimesOut() async {
    let clock = ManualClock()
    let deadlines = DeadlineQueue(limit: .seconds(2), clock: clock)
    let gate = Gate()
    let outcome = Task {
      await Race<String>.run(
        within: deadlines,
        {
          await Task.detached { try? await gate.wait() }.value  // deaf to cancellation
          return "value"
        },
        timedOut: { "timed out" },
        cancelled: { "cancelled" })
    }
    await clock.waitForSleepers(count: 1)
    clock.advance(by: .seconds(2))
    #expect(await outcome.value == "timed out")
    gate.open()
  }

  @Test("Race.run(within:) returns the value and cancels its deadline when the operation is first")
  func raceValue() async {
    let clock = ManualClock()
    let deadlines = DeadlineQueue(limit: .seconds(2), clock: clock)
    let suspended = await Race<String>.run(
      within: deadlines,
      {
        await Task.yield()
        return "value"
      },
      timedOut: { "timed out" },
      cancelled: { "cancelled" })
    #expect(suspended == "value")
    let immediate = await Race<String>.run(
      within: deadlines, { "immediate" }, timedOut: { "timed out" }, cancelled: { "cancelled" })
    #expect(immediate == "immediate")
    #expect(deadlines.pendingCount == 0)
  }

  @Test("Race.run(within:) returns cancelled at once when the caller is cancelled")
  func raceCancelled() async {
    let clock = ManualClock()
    let deadlines = DeadlineQueue(limit: .seconds(2), clock: clock)
    let gate = Gate()
    let outcome = Task {
      await Race<String>.run(
        within: deadlines,
        {
          await Task.detached { try? await gate.wait() }.value  // deaf to cancellation
          return "value"
        },
        timedOut: { "timed out" },
        cancelled: { "cancelled" })
    }
    await clock.waitForSleepers(count: 1)
    outcome.cancel()
    #expect(await outcome.value == "cancelled")
    #expect(deadlines.pendingCount == 0)
    gate.open()
  }
}
