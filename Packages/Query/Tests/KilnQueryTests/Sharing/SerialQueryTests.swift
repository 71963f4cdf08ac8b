import KilnTesting
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

  @Test("cancelling some waiters does not cancel the shared load")
  func cancelSomeWaiters() async throws {
    let spy = SpyQuery<Int, any Error>(.success(7))
    spy.hold()
    let query = spy.serial()
    let waiters = (0..<3).map { _ in Task { try await query.load() } }
    await FlightEvents.current.waitForJoins(3)
    #expect(query.waiterCount == 3)

    waiters[0].cancel()
    waiters[1].cancel()
    // The cancelled callers return at once, while the load is still held.
    await #expect(throws: CancellationError.self) { try await waiters[0].value }
    await #expect(throws: CancellationError.self) { try await waiters[1].value }
    #expect(spy.inFlightCount == 1)
    #expect(query.waiterCount == 1)

    spy.release()
    #expect(try await waiters[2].value == 7)
    #expect(spy.cancelledCount == 0)
    #expect(spy.loadCount == 1)
  }

  @Test("cancelling all waiters cancels the shared load")
  func cancelAllWaiters() async {
    let spy = SpyQuery<Int, any Error>(.success(7))
    spy.hold()
    let query = spy.serial()
    let waiters = (0..<3).map { _ in Task { try await query.load() } }
    await FlightEvents.current.waitForJoins(3)
    #expect(query.waiterCount == 3)

    for waiter in waiters { waiter.cancel() }
    for waiter in waiters {
      await #expect(throws: CancellationError.self) { try await waiter.value }
    }
    await spy.waitForCompletions(1)
    #expect(spy.cancelledCount == 1)
  }

  @Test("after every waiter gave up, the next caller starts a fresh load")
  func freshLoadAfterAbandon() async throws {
    let spy = SpyQuery<Int, any Error> { .success($0) }
    spy.hold()
    let query = spy.serial()
    let abandoned = Task { try await query.load() }
    await FlightEvents.current.waitForJoins(1)
    #expect(query.waiterCount == 1)
    abandoned.cancel()
    await #expect(throws: CancellationError.self) { try await abandoned.value }

    spy.release()
    #expect(try await query.load() == 2)
    #expect(spy.loadCount == 2)
  }

  @Test("after every waiter gave up on a load that ignores it, the next caller's load starts once that one ended")
  func nextLoadWaitsForAbandonedLoad() async throws {
    let source = StubbornQuery(value: 4)
    let query = AnyQuery<Int, any Error> { await source.load() }.serial()
    await source.abandonLoad { try await query.load() }

    let next = Task { try await query.load() }
    await FlightEvents.current.waitForStarts(2)
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
    let source = StubbornQuery(value: 4)
    let query = AnyQuery<Int, any Error> { await source.load() }.serial()
    await source.abandonLoad { try await query.load() }
    let gaveUp = Task { try await query.load() }
    await FlightEvents.current.waitForStarts(2)
    #expect(query.slot.waitsForAbandonedLoad)
    gaveUp.cancel()
    await #expect(throws: CancellationError.self) { try await gaveUp.value }

    source.finish()
    #expect(try await query.load() == 4)  // starts once the load nobody wanted has ended
    #expect(source.loadCount == 2)  // the abandoned one and this one
  }

  @Test("a typed caller who gives up while an abandoned load runs on gets that load's outcome")
  func typedGivingUpWhileWaitingForAbandonedLoad() async {
    let source = StubbornQuery(value: 4)
    let query = AnyQuery { () async throws(APIError) -> Int in await source.load() }.serial()
    let abandoned = Task { await query.result() }
    await source.waitForLoads(1)
    abandoned.cancel()  // typed: it keeps waiting, but the load is abandoned
    await FlightEvents.current.waitForLeaves(1)
    #expect(!query.isLoading)
    let gaveUp = Task { await query.result() }
    await FlightEvents.current.waitForStarts(2)
    #expect(query.slot.waitsForAbandonedLoad)
    gaveUp.cancel()

    source.finish()
    #expect(await abandoned.value == .success(4))
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
    let first = Task { await query.result() }
    let second = Task { await query.result() }
    await FlightEvents.current.waitForJoins(2)
    #expect(query.waiterCount == 2)

    first.cancel()
    #expect(spy.cancelledCount == 0)  // one interested waiter left: the load goes on
    second.cancel()
    #expect(await first.value == .success(3))
    #expect(await second.value == .success(3))
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
}
