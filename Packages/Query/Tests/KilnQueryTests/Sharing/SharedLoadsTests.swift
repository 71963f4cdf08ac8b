import KilnTesting
import Testing

@testable import KilnQuery

@Suite("shared(by:in:) and SharedLoads", .timeLimit(.minutes(1)), .observingFlights)
struct SharedLoadsTests {
  @Test("different queries with the same key share one load")
  func sameKeyShares() async throws {
    let loads = SharedLoads<String>()
    let first = SpyQuery<Int, any Error>(.success(1))
    let second = SpyQuery<Int, any Error>(.success(2))
    first.hold()
    let a = Task { try await first.shared(by: "article/7", in: loads).load() }
    await first.waitForLoads(1)
    let b = Task { try await second.shared(by: "article/7", in: loads).load() }
    await FlightEvents.current.waitForJoins(2)
    #expect(loads.waiterCount("article/7", Result<Int, any Error>.self) == 2)
    #expect(loads.isLoading("article/7"))
    #expect(counterValue(loads.counterReadings(), "kiln_single_flight_in_flight") == 1)

    first.release()
    #expect(try await a.value == 1)
    #expect(try await b.value == 1)
    #expect(second.loadCount == 0)
    #expect(loads.inFlightCount == 0)
    #expect(!loads.isLoading("article/7"))
    let readings = loads.counterReadings()
    #expect(counterValue(readings, "kiln_single_flight_loads_total", [("role", "started")]) == 1)
    #expect(counterValue(readings, "kiln_single_flight_loads_total", [("role", "joined")]) == 1)
    #expect(counterValue(readings, "kiln_single_flight_in_flight") == 0)
  }

  @Test("different keys load separately")
  func differentKeys() async throws {
    let loads = SharedLoads<Int>()
    let spy = SpyQuery<Int, any Error> { .success($0) }
    spy.hold()
    let a = Task { try await spy.shared(by: 1, in: loads).load() }
    let b = Task { try await spy.shared(by: 2, in: loads).load() }
    await spy.waitForLoads(2)
    #expect(loads.inFlightCount == 2)
    spy.release()
    #expect(Set([try await a.value, try await b.value]) == [1, 2])
  }

  @Test("the same key with another result type never shares")
  func differentTypes() async throws {
    let loads = SharedLoads<String>()
    let numbers = SpyQuery<Int, any Error>(.success(1))
    let words = SpyQuery<String, any Error>(.success("one"))
    numbers.hold()
    words.hold()
    let a = Task { try await numbers.shared(by: "k", in: loads).load() }
    let b = Task { try await words.shared(by: "k", in: loads).load() }
    await numbers.waitForLoads(1)
    await words.waitForLoads(1)
    #expect(loads.inFlightCount == 2)
    numbers.release()
    words.release()
    #expect(try await a.value == 1)
    #expect(try await b.value == "one")
  }

  @Test("nothing is cached: a load after the shared one finished starts anew")
  func noCaching() async throws {
    let loads = SharedLoads<String>()
    let spy = SpyQuery<Int, any Error> { .success($0) }
    #expect(try await spy.shared(by: "k", in: loads).load() == 1)
    #expect(try await loads.load("k", using: spy) == 2)
    #expect(spy.loadCount == 2)
  }

  @Test("the shared load is cancelled only when its last waiter is")
  func cancellation() async {
    let loads = SharedLoads<String>()
    let spy = SpyQuery<Int, any Error>(.success(1))
    spy.hold()
    let query = spy.shared(by: "k", in: loads)
    let a = Task { try await query.load() }
    let b = Task { try await query.load() }
    await FlightEvents.current.waitForJoins(2)
    #expect(loads.waiterCount("k", Result<Int, any Error>.self) == 2)

    a.cancel()
    await #expect(throws: CancellationError.self) { try await a.value }
    #expect(spy.cancelledCount == 0)

    b.cancel()
    await #expect(throws: CancellationError.self) { try await b.value }
    await spy.waitForCompletions(1)
    #expect(spy.cancelledCount == 1)
    await FlightEvents.current.waitForEnds(1)
    #expect(loads.inFlightCount == 0)
  }

  @Test("one key never has two loads running: the next load waits for an abandoned one that runs on")
  func nextLoadWaitsForAbandonedLoad() async throws {
    let loads = SharedLoads<String>()
    let source = StubbornQuery(value: 5)
    let query = AnyQuery<Int, any Error> { await source.load() }.shared(by: "k", in: loads)
    await source.abandonLoad { try await query.load() }
    #expect(loads.isLoading("k"))  // still running

    let next = Task { try await query.load() }
    await FlightEvents.current.waitForStarts(2)
    #expect(loads.waitsForAbandonedLoad("k", Result<Int, any Error>.self))
    #expect(source.loadCount == 1)
    #expect(loads.inFlightCount == 1)

    source.finish()
    #expect(try await next.value == 5)
    #expect(source.loadCount == 2)
    #expect(source.events.values == ["start", "end", "start", "end"])
    await FlightEvents.current.waitForEnds(2)
    #expect(loads.inFlightCount == 0)
  }

  @Test("typed failures are shared with their type")
  func typedFailure() async {
    let loads = SharedLoads<Int>()
    let result: Result<Int, APIError> = await TypedQuery(outcome: .failure(.status(503))).shared(by: 1, in: loads)
      .result()
    #expect(result == .failure(.status(503)))
  }
}
