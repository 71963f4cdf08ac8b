import KilnTesting
import Synchronization
import Testing

@testable import KilnQuery

@Suite("serial()", .timeLimit(.minutes(1)), .observingFlights)
struct SerialQueryTests {
  @Test("10,000 concurrent loads cause one underlying load and all receive its value")
  func tenThousandCallersShareOneLoad() async throws {
    let spy = SpyQuery<Int, any Error> { .success($0) }
    spy.hold()
    let query = spy.serial()
    let callers = 10_000
    let flights = FlightEvents.current

    try await withThrowingTaskGroup(of: Int.self) { group in
      for _ in 0..<callers {
        group.addTask { try await query.load() }
      }
      await flights.waitForJoins(callers)
      #expect(query.isLoading)
      spy.release()

      var values: [Int: Int] = [:]
      for try await value in group { values[value, default: 0] += 1 }
      #expect(values == [1: callers])
    }
    #expect(spy.loadCount == 1)
    #expect(!query.isLoading)
  }

  @Test("a caller who finds no load to join runs it in its own task")
  func loneCallerRunsInline() async throws {
    let query = AnyQuery<Int?, Never> { withUnsafeCurrentTask { $0?.hashValue } }.serial()
    let caller = withUnsafeCurrentTask { $0?.hashValue }
    #expect(caller != nil)
    #expect(await query.load() == caller)
    #expect(!query.isLoading)
  }

  @Test("a load that starts after completion starts a new load")
  func newLoadAfterCompletion() async throws {
    let spy = SpyQuery<Int, any Error> { .success($0) }
    let query = spy.serial()
    #expect(try await query.load() == 1)
    #expect(try await query.load() == 2)
    #expect(spy.loadCount == 2)
  }

  @Test("a failure is shared too, and is not kept for later loads")
  func failureShared() async throws {
    let spy = SpyQuery<Int, APIError>(results: [.failure(.offline), .success(5)])
    spy.hold()
    let query = spy.serial()
    let first = Task { await query.result() }
    let second = Task { await query.result() }
    await FlightEvents.current.waitForJoins(2)
    #expect(query.waiterCount == 2)
    spy.release()

    #expect(await first.value == .failure(.offline))
    #expect(await second.value == .failure(.offline))
    #expect(await query.result() == .success(5))
    #expect(spy.loadCount == 2)
  }

  @Test("cancelling callers who joined does not cancel the shared load")
  func cancelSomeWaiters() async throws {
    let spy = SpyQuery<Int, any Error>(.success(7))
    spy.hold()
    let query = spy.serial()
    let (leader, joiners) = await startLeader(of: query, joiners: 2)
    #expect(query.waiterCount == 3)

    for joiner in joiners { joiner.cancel() }
    // The cancelled callers return at once, while the load is still held.
    for joiner in joiners {
      await #expect(throws: CancellationError.self) { try await joiner.value }
    }
    #expect(spy.inFlightCount == 1)
    #expect(query.waiterCount == 1)

    spy.release()
    #expect(try await leader.value == 7)
    #expect(spy.cancelledCount == 0)
    #expect(spy.loadCount == 1)
  }

  @Test("cancelling every caller cancels the shared load")
  func cancelAllWaiters() async {
    let spy = SpyQuery<Int, any Error>(.success(7))
    spy.hold()
    let query = spy.serial()
    let (leader, joiners) = await startLeader(of: query, joiners: 2)

    for joiner in joiners { joiner.cancel() }
    for joiner in joiners {
      await #expect(throws: CancellationError.self) { try await joiner.value }
    }
    #expect(spy.cancelledCount == 0)  // the leader still waits: the load goes on
    leader.cancel()
    await #expect(throws: CancellationError.self) { try await leader.value }
    #expect(spy.cancelledCount == 1)
    #expect(spy.loadCount == 1)
    #expect(!query.isLoading)
  }

  @Test("when the leader is cancelled and its load fails, the callers who joined get a load of their own")
  func cancelledLeaderHandsOver() async throws {
    let spy = SpyQuery<Int, any Error> { .success($0) }
    spy.hold()
    let query = spy.serial()
    let (leader, joiners) = await startLeader(of: query, joiners: 2)

    leader.cancel()  // the load runs in the leader's task: it is cancelled with it
    await #expect(throws: CancellationError.self) { try await leader.value }
    await spy.waitForLoads(2)  // a new load for the joiners, in a task of its own
    #expect(spy.inFlightCount == 1)  // after the leader's load ended: never two at once
    #expect(query.isLoading)
    #expect(query.waiterCount == 2)

    spy.release()
    for joiner in joiners {
      #expect(try await joiner.value == 2)  // the new load's value, not the cancellation
    }
    #expect(spy.loadCount == 2)
    #expect(spy.cancelledCount == 1)
  }

  @Test("when the leader is cancelled and its load succeeds anyway, the callers who joined get that value")
  func cancelledLeaderSucceeds() async throws {
    let source = StubbornQuery(value: 4)
    let query = AnyQuery<Int, any Error> { await source.load() }.serial()
    let leader = Task { try await query.load() }
    await source.waitForLoads(1)
    leader.cancel()  // the load ignores it; the leader waits for it, as a plain call would
    let late = Task { try await query.load() }
    await FlightEvents.current.waitForJoins(2)
    #expect(query.isLoading)

    source.finish()
    #expect(try await leader.value == 4)
    #expect(try await late.value == 4)  // joined the running load instead of starting one
    #expect(source.loadCount == 1)
    #expect(source.events.values == ["start", "end"])
  }

  @Test("a lone caller cancelled during its load gets what the load returns, and the next caller starts a fresh load")
  func freshLoadAfterAbandon() async throws {
    let spy = SpyQuery<Int, any Error> { .success($0) }
    spy.hold()
    let query = spy.serial()
    let abandoned = Task { try await query.load() }
    await spy.waitForLoads(1)
    #expect(query.waiterCount == 1)
    abandoned.cancel()
    await #expect(throws: CancellationError.self) { try await abandoned.value }
    #expect(!query.isLoading)

    spy.release()
    #expect(try await query.load() == 2)
    #expect(spy.loadCount == 2)
  }

  @Test(
    "after every caller gave up on a handed-over load that ignores it, the next caller's load starts once that one ended"
  )
  func nextLoadWaitsForAbandonedLoad() async throws {
    let (query, source) = await abandonedHandOver()
    let next = Task { try await query.load() }
    await FlightEvents.current.waitForStarts(3)  // the leader's, the handed-over one, this one
    #expect(query.slot.waitsForAbandonedLoad)
    #expect(source.loadCount == 1)  // the abandoned load runs on: no second one beside it
    #expect(query.isLoading)

    source.finish()
    #expect(try await next.value == 4)
    #expect(source.loadCount == 2)  // a load of its own, not the abandoned one's outcome
    #expect(source.events.values == ["start", "end", "start", "end"])
  }

  @Test("callers who all give up while an abandoned load runs on cause no load of their own")
  func givingUpWhileWaitingForAbandonedLoad() async throws {
    let (query, source) = await abandonedHandOver()
    let gaveUp = Task { try await query.load() }
    await FlightEvents.current.waitForStarts(3)
    #expect(query.slot.waitsForAbandonedLoad)
    gaveUp.cancel()
    await #expect(throws: CancellationError.self) { try await gaveUp.value }

    source.finish()
    #expect(try await query.load() == 4)  // starts once the load nobody wanted has ended
    #expect(source.loadCount == 2)  // the abandoned one and this one
  }

  @Test("typed callers who give up on a cancelled leader's load that runs on get its outcome")
  func typedGivingUpWhileLeaderLoadRunsOn() async {
    let source = StubbornQuery(value: 4)
    let query = AnyQuery { () async throws(APIError) -> Int in await source.load() }.serial()
    let leader = Task { await query.result() }
    await source.waitForLoads(1)
    leader.cancel()  // typed: its load ignores the cancellation and runs on
    let gaveUp = Task { await query.result() }
    await FlightEvents.current.waitForJoins(2)
    gaveUp.cancel()  // typed: it keeps waiting for the outcome
    await FlightEvents.current.waitForLeaves(1)

    source.finish()
    #expect(await leader.value == .success(4))
    #expect(await gaveUp.value == .success(4))  // no longer than the load already running takes
    #expect(source.loadCount == 1)
  }

  @Test("a waiter with a higher priority raises the priority of the shared load")
  func waiterRaisesPriority() async throws {
    let gate = Gate()
    let query = AnyQuery<TaskPriority, any Error> {
      try await gate.wait()
      return Task.currentPriority
    }
    .serial()
    let low = Task(priority: .background) { try await query.load() }
    await gate.waitForWaiters(1)
    #expect(query.slot.loadPriority == .background)

    let high = Task(priority: .high) { try await query.load() }
    await FlightEvents.current.waitForWaiters(2)
    #expect(query.slot.loadPriority == .high)
    gate.open()
    #expect(try await low.value == .high)  // the load ran at the highest waiter's priority
    #expect(try await high.value == .high)
  }

  @Test("a typed waiter that is cancelled still gets the outcome; all cancelled cancels the load")
  func typedCancellation() async {
    // `APIError` cannot hold a CancellationError: the waiters get what the cancelled load
    // returns (the spy returns its scripted value when cancelled while held).
    let spy = SpyQuery<Int, APIError>(.success(3))
    spy.hold()
    let query = spy.serial()
    let leader = Task { await query.result() }
    await spy.waitForLoads(1)
    let joiner = Task { await query.result() }
    await FlightEvents.current.waitForJoins(2)
    #expect(query.waiterCount == 2)

    joiner.cancel()
    await FlightEvents.current.waitForLeaves(1)
    #expect(spy.cancelledCount == 0)  // the leader still waits: the load goes on
    leader.cancel()
    #expect(await leader.value == .success(3))
    #expect(await joiner.value == .success(3))
    #expect(spy.cancelledCount == 1)
  }

  @Test("a caller cancelled before it calls gets CancellationError and starts nothing")
  func cancelledBeforeJoining() async {
    let spy = SpyQuery<Int, any Error>(.success(1))
    let query = spy.serial()
    let load = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      return try await query.load()
    }
    await #expect(throws: CancellationError.self) { try await load.value }
    #expect(!query.isLoading)
    #expect(spy.loadCount == 0)
  }

  @Test("copies share their loads; separate serial() calls do not")
  func copiesShare() async throws {
    let spy = SpyQuery<Int, any Error> { .success($0) }
    spy.hold()
    let query = spy.serial()
    let copy = query
    let other = spy.serial()
    let a = Task { try await query.load() }
    let b = Task { try await copy.load() }
    let c = Task { try await other.load() }
    await FlightEvents.current.waitForJoins(3)
    #expect(query.waiterCount == 2 && other.waiterCount == 1)
    spy.release()
    let values = [try await a.value, try await b.value, try await c.value]
    #expect(values[0] == values[1])
    #expect(values[2] != values[0])
    #expect(spy.loadCount == 2)
  }

  /// Starts a caller of `query` and waits until it leads (runs its spy's held load inline),
  /// then starts `count` callers and waits until they have joined it.
  private func startLeader(
    of query: SerialQuery<SpyQuery<Int, any Error>>,
    joiners count: Int
  ) async -> (leader: Task<Int, any Error>, joiners: [Task<Int, any Error>]) {
    let leader = Task { try await query.load() }
    await query.upstream.waitForLoads(1)
    let joiners = (0..<count).map { _ in Task { try await query.load() } }
    await FlightEvents.current.waitForJoins(1 + count)
    return (leader, joiners)
  }

  /// A serial query whose load was handed over to the callers who joined it and then
  /// abandoned by them while it runs on: its first load honours cancellation, every later
  /// one ignores it (`source`). Returns once the abandoned load is the one in the slot.
  private func abandonedHandOver() async -> (query: SerialQuery<AnyQuery<Int, any Error>>, source: StubbornQuery) {
    let first = SpyQuery<Int, any Error>(.success(0))
    first.hold()
    let source = StubbornQuery(value: 4)
    let calls = CallCounter()
    let query = AnyQuery<Int, any Error> {
      calls.next() == 1 ? try await first.load() : await source.load()
    }.serial()
    let leader = Task { try await query.load() }
    await first.waitForLoads(1)
    let joiner = Task { try await query.load() }
    await FlightEvents.current.waitForJoins(2)
    leader.cancel()
    await #expect(throws: CancellationError.self) { try await leader.value }
    await source.waitForLoads(1)  // the handed-over load, which ignores cancellation
    joiner.cancel()
    await #expect(throws: CancellationError.self) { try await joiner.value }
    #expect(!query.isLoading)
    return (query, source)
  }
}

/// Counts calls from any task.
private final class CallCounter: Sendable {
  private let count = Atomic<Int>(0)

  /// The number of this call, from 1.
  func next() -> Int {
    count.add(1, ordering: .relaxed).newValue
  }
}
