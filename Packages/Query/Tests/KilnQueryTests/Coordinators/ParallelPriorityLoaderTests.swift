import KilnQuery
import KilnTesting
import Testing

@Suite("ParallelPriorityLoader", .timeLimit(.minutes(1)))
struct ParallelPriorityLoaderTests {
  private typealias LoaderError = ParallelPriorityLoaderError<APIError>

  @Test("a failing mandatory item fails the load and cancels the others")
  func mandatoryFailure() async {
    let main = SpyQuery<Int, APIError>(.failure(.status(500)))
    let optional = SpyQuery<Int, APIError>(.success(2))
    main.hold()
    optional.hold()
    let loader = ParallelPriorityLoader([optional.prioritized(.optional), main.prioritized(.required)])
    let load = Task { await loader.result() }
    await main.waitForLoads(1)
    await optional.waitForLoads(1)

    main.release()

    #expect(await load.value == .failure(.mandatoryFailed(index: 1, failure: .status(500))))
    await optional.waitForCompletions(1)
    #expect(optional.cancelledCount == 1)
  }

  @Test("a failing optional item becomes nil and does not fail the load")
  func optionalFailure() async {
    // Every item optional: the load waits for all of them, so the failure is surely seen.
    let loader = ParallelPriorityLoader([
      TypedQuery(outcome: .success(1)).prioritized(.optional),
      TypedQuery(outcome: .failure(.offline)).prioritized(.optional),
      TypedQuery(outcome: .success(3)).prioritized(.custom(7)),
    ])
    #expect(await loader.result() == .success([1, nil, 3]))
  }

  @Test("succeeds as soon as every mandatory item is in, with unfinished optional items nil")
  func successOnMandatory() async throws {
    let main = SpyQuery<Int, any Error>(.success(1))
    let slow = SpyQuery<Int, any Error>(.success(2))
    let quick = SpyQuery<Int, any Error>(.success(3))
    slow.hold()
    main.hold()
    let loader = ParallelPriorityLoader([
      main.prioritized(.required), slow.prioritized(.optional), quick.prioritized(.optional),
    ])
    let load = Task { try await loader.load() }
    await quick.waitForCompletions(1)
    await slow.waitForLoads(1)

    main.release()

    #expect(try await load.value == [1, nil, 3])
    await slow.waitForCompletions(1)
    #expect(slow.cancelledCount == 1)
  }

  @Test("times out on the injected clock while a mandatory item is missing")
  func timeout() async {
    let clock = ManualClock()
    let main = SpyQuery<Int, APIError>(.success(1))
    main.hold()
    let loader = ParallelPriorityLoader([main.prioritized(.required)], timeout: .seconds(5), clock: clock)
    let load = Task { await loader.result() }
    await main.waitForLoads(1)
    await clock.waitForSleepers(count: 1)

    clock.advance(by: .seconds(5) - .nanoseconds(1))
    #expect(clock.sleeperCount == 1)
    clock.advance(by: .nanoseconds(1))

    #expect(await load.value == .failure(.timeout))
    await main.waitForCompletions(1)
    #expect(main.cancelledCount == 1)
  }

  @Test("the time limit also ends a load whose item ignores cancellation")
  func timeoutWithStubbornItem() async {
    let clock = ManualClock()
    let stubborn = StubbornQuery(value: 1)
    let loader = ParallelPriorityLoader([stubborn.prioritized(.required)], timeout: .seconds(1), clock: clock)
    let load = Task { await loader.result() }
    await stubborn.waitForLoads(1)
    await clock.waitForSleepers(count: 1)
    clock.advance(by: .seconds(1))
    #expect(await load.value == .failure(.timeout))
    stubborn.finish()
  }

  @Test("results are in item order, whatever order the items finish in")
  func itemOrder() async throws {
    let spies = (0..<4).map { index in SpyQuery<Int, any Error>(.success(index * 10)) }
    for spy in spies { spy.hold() }
    let loader = ParallelPriorityLoader(spies.map { $0.prioritized(.required) })
    let load = Task { try await loader.load() }
    for spy in spies { await spy.waitForLoads(1) }

    for spy in spies.reversed() {
      spy.release()
      await spy.waitForCompletions(1)
    }

    #expect(try await load.value == [0, 10, 20, 30])
  }

  @Test("two concurrent loads are independent")
  func independentLoads() async throws {
    let main = SpyQuery<Int, any Error> { .success($0) }
    main.hold()
    let loader = ParallelPriorityLoader([main.prioritized(.required)])
    let first = Task { await loader.result() }
    let second = Task { try await loader.load() }
    await main.waitForLoads(2)

    first.cancel()
    let cancelled = if case .failure(.cancelled) = await first.value { true } else { false }
    #expect(cancelled)
    #expect(main.inFlightCount == 1)  // the second load's item goes on

    main.release()
    let value = try await second.value
    #expect(value.count == 1)
    #expect(value[0] != nil)
    #expect(main.loadCount == 2)
  }

  @Test("cancelling the caller ends the load with .cancelled")
  func cancelled() async {
    let main = SpyQuery<Int, APIError>(.success(1))
    main.hold()
    let loader = ParallelPriorityLoader([main.prioritized(.required)])
    let load = Task { await loader.result() }
    await main.waitForLoads(1)
    load.cancel()
    #expect(await load.value == .failure(.cancelled))
  }

  @Test("custom priorities are mandatory at or above the mandatory priority")
  func customPriorities() async {
    let loader = ParallelPriorityLoader(
      [
        TypedQuery(outcome: .failure(.status(1))).prioritized(.custom(1)),
        TypedQuery(outcome: .failure(.status(5))).prioritized(.custom(5)),
      ],
      mandatoryPriority: .custom(5)
    )
    #expect(await loader.result() == .failure(.mandatoryFailed(index: 1, failure: .status(5))))
    #expect(ParallelPriority.optional < .custom(Int.min + 1))
    #expect(ParallelPriority.custom(Int.max - 1) < .required)
    #expect(ParallelPriority.custom(3) < .custom(4))
  }

  @Test("without mandatory items, a load waits for every item")
  func noMandatoryWaitsForAll() async throws {
    let slow = SpyQuery<Int, any Error>(.success(2))
    slow.hold()
    let loader = ParallelPriorityLoader([
      AnyQuery<Int, any Error> { 1 }.prioritized(.optional), slow.prioritized(.optional),
      AnyQuery<Int, any Error>.failure(TestError("x")).prioritized(.optional),
    ])
    let load = Task { try await loader.load() }
    await slow.waitForLoads(1)
    slow.release()
    #expect(try await load.value == [1, 2, nil])
  }

  @Test("without mandatory items, the time limit returns the items that are in")
  func noMandatoryTimeLimit() async throws {
    let clock = ManualClock()
    let slow = SpyQuery<Int, any Error>(.success(2))
    slow.hold()
    let loader = ParallelPriorityLoader(
      [AnyQuery<Int, any Error> { 1 }.prioritized(.optional), slow.prioritized(.optional)],
      timeout: .seconds(1),
      clock: clock
    )
    let load = Task { try await loader.load() }
    await slow.waitForLoads(1)
    await clock.waitForSleepers(count: 1)
    clock.advance(by: .seconds(1))
    let values = try await load.value
    #expect(values[1] == nil)
  }

  @Test("no items: an empty success at once")
  func noItems() async throws {
    let loader = ParallelPriorityLoader<Int, any Error>([])
    #expect(try await loader.load().isEmpty)
  }

  @Test("loadMandatory loads an array of items the same way")
  func loadMandatory() async throws {
    let items = [
      AnyQuery<String, any Error> { "main" }.prioritized(.required),
      AnyQuery<String, any Error>.failure(TestError("ads down")).prioritized(.optional),
    ]
    let values = try await items.loadMandatory(mandatoryPriority: .required, timeout: .seconds(5))
    #expect(values[0] == "main")
    #expect(values[1] == nil)
  }
}
