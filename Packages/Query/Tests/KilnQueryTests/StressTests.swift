import KilnTesting
import Synchronization
import Testing

@testable import KilnQuery

/// Thousands of randomized concurrent operations through the stateful operators, checking
/// invariants that any interleaving must keep. They run under Thread Sanitizer in CI.
@Suite("Stress", .timeLimit(.minutes(1)), .observingFlights)
struct StressTests {
  private enum Outcome: Sendable {
    case value(Int)
    case cancelled
    case other(String)
  }

  /// Yields a random number of times: shuffles the interleavings.
  private static func yield(upTo limit: Int, _ random: inout SeededRandomNumberGenerator) async {
    for _ in 0..<Int.random(in: 0...limit, using: &random) { await Task.yield() }
  }

  private static func outcome(_ body: () async throws -> Int) async -> Outcome {
    do {
      return .value(try await body())
    } catch is CancellationError {
      return .cancelled
    } catch {
      return .other("\(error)")
    }
  }

  @Test("serial(): 3,000 callers in small random groups, some cancelled, only ever get a shared load's value")
  func serial() async {
    let seed = TestSeed.current
    let shared = SharedRandom(seed: seed)
    var random = SeededRandomNumberGenerator(seed: seed)
    let spy = SpyQuery<Int, any Error> { .success($0) }
    let upstream = AnyQuery<Int, any Error> {
      let value = try await spy.load()
      for _ in 0..<shared.int(in: 0...4) { await Task.yield() }
      // A shared load cancelled while someone still waits for it would surface here.
      try Task.checkCancellation()
      return value
    }
    let query = upstream.serial()

    // Small groups make every transition frequent: a flight with one waiter, with all of
    // them cancelled, with all but one cancelled, a new flight while an abandoned one ends…
    var outcomes: [(cancelled: Bool, outcome: Outcome)] = []
    while outcomes.count < 3_000 {
      let size = Int.random(in: 1...8, using: &random)
      let plans = (0..<size).map { _ in
        (
          delay: Int.random(in: 0...3, using: &random),
          cancels: Int.random(in: 0..<100, using: &random) < 30,
          cancelDelay: Int.random(in: 0...3, using: &random)
        )
      }
      let group = await withTaskGroup(of: (Bool, Outcome).self) { group in
        for plan in plans {
          group.addTask {
            for _ in 0..<plan.delay { await Task.yield() }
            let load = Task { await Self.outcome { try await query.load() } }
            if plan.cancels {
              for _ in 0..<plan.cancelDelay { await Task.yield() }
              load.cancel()
            }
            return (plan.cancels, await load.value)
          }
        }
        var outcomes: [(Bool, Outcome)] = []
        for await outcome in group { outcomes.append(outcome) }
        return outcomes
      }
      outcomes += group.map { (cancelled: $0.0, outcome: $0.1) }
    }

    let loads = spy.loadCount
    #expect(loads >= 1 && loads <= outcomes.count, "KILN_TEST_SEED=\(seed)")
    for (cancelled, outcome) in outcomes {
      switch outcome {
      case .value(let value):
        #expect(value >= 1 && value <= loads, "KILN_TEST_SEED=\(seed): value \(value) from none of the \(loads) loads")
      case .cancelled:
        #expect(cancelled, "KILN_TEST_SEED=\(seed): a caller that was not cancelled got CancellationError")
      case .other(let error):
        Issue.record("KILN_TEST_SEED=\(seed): unexpected \(error)")
      }
    }
    await FlightEvents.current.waitUntilAllEnded()
    #expect(!query.isLoading)
    #expect(query.waiterCount == 0)
  }

  @Test("serial(): 4,000 callers racing lone leaders, watched by an inspector, never overlap two loads")
  func serialLoneLeaders() async {
    // A caller who finds the slot empty leads without the lock, and ends so when nobody saw
    // it; a caller joining it, or an inspection (`isLoading`, `waiterCount`), records it under
    // the lock first. Pairs and triples of callers arriving together, with an inspector
    // looking at the slot all along, race every one of those transitions.
    let seed = TestSeed.current
    let shared = SharedRandom(seed: seed)
    var random = SeededRandomNumberGenerator(seed: seed)
    // Atomics, not a Mutex: ThreadSanitizer sees them (it does not see the futex-based Mutex).
    let running = Atomic<Int>(0)
    let overlaps = Atomic<Int>(0)
    let started = Atomic<Int>(0)
    let upstream = AnyQuery<Int, Never> {
      let number = started.add(1, ordering: .relaxed).newValue
      if running.add(1, ordering: .sequentiallyConsistent).newValue > 1 {
        overlaps.add(1, ordering: .relaxed)
      }
      for _ in 0..<shared.int(in: 0...2) { await Task.yield() }
      running.subtract(1, ordering: .sequentiallyConsistent)
      return number
    }
    let query = upstream.serial()
    let inspecting = Atomic<Bool>(true)
    let inspector = Task {
      var looks = 0
      while inspecting.load(ordering: .relaxed) {
        if query.isLoading { looks += 1 }
        _ = query.waiterCount
        await Task.yield()
      }
      return looks
    }

    var values: [Int] = []
    while values.count < 4_000 {
      let plans = (0..<Int.random(in: 1...3, using: &random)).map { _ in Int.random(in: 0...2, using: &random) }
      values += await withTaskGroup(of: Int.self) { group in
        for delay in plans {
          group.addTask {
            for _ in 0..<delay { await Task.yield() }
            return await query.load()
          }
        }
        var values: [Int] = []
        for await value in group { values.append(value) }
        return values
      }
    }
    inspecting.store(false, ordering: .relaxed)
    let looks = await inspector.value

    let loads = started.load(ordering: .relaxed)
    #expect(overlaps.load(ordering: .relaxed) == 0, "KILN_TEST_SEED=\(seed): two loads ran at once")
    // Not vacuous: callers did join loads, and the inspector did see some.
    #expect(loads >= 1 && loads < values.count, "KILN_TEST_SEED=\(seed): \(loads) loads for \(values.count) callers")
    #expect(looks > 0, "KILN_TEST_SEED=\(seed): the inspector never saw a load")
    #expect(values.allSatisfy { (1...loads).contains($0) }, "KILN_TEST_SEED=\(seed): a value from no load")
    #expect(!query.isLoading)
    #expect(query.waiterCount == 0)
    // The slot is empty again: the next caller leads, alone, a load of its own.
    #expect(await query.load() == loads + 1)
  }

  @Test("shared(by:): 3,000 callers over 4 keys, some cancelled, never get another key's value")
  func sharedByKey() async {
    let seed = TestSeed.current
    let shared = SharedRandom(seed: seed)
    var random = SeededRandomNumberGenerator(seed: seed)
    let loads = SharedLoads<Int>()
    let keys = 4
    let spies = (0..<keys).map { key in SpyQuery<Int, any Error> { .success(key * 1_000_000 + $0) } }
    let queries = (0..<keys).map { key in
      AnyQuery<Int, any Error> {
        let value = try await spies[key].load()
        for _ in 0..<shared.int(in: 0...4) { await Task.yield() }
        try Task.checkCancellation()
        return value
      }.shared(by: key, in: loads)
    }

    var outcomes: [(key: Int, cancelled: Bool, outcome: Outcome)] = []
    while outcomes.count < 3_000 {
      let size = Int.random(in: 1...12, using: &random)
      let plans = (0..<size).map { _ in
        (
          key: Int.random(in: 0..<keys, using: &random),
          delay: Int.random(in: 0...3, using: &random),
          cancels: Int.random(in: 0..<100, using: &random) < 30
        )
      }
      let group = await withTaskGroup(of: (Int, Bool, Outcome).self) { group in
        for plan in plans {
          let query = queries[plan.key]
          group.addTask {
            for _ in 0..<plan.delay { await Task.yield() }
            let load = Task { await Self.outcome { try await query.load() } }
            if plan.cancels {
              await Task.yield()
              load.cancel()
            }
            return (plan.key, plan.cancels, await load.value)
          }
        }
        var outcomes: [(Int, Bool, Outcome)] = []
        for await outcome in group { outcomes.append(outcome) }
        return outcomes
      }
      outcomes += group.map { (key: $0.0, cancelled: $0.1, outcome: $0.2) }
    }

    for (key, cancelled, outcome) in outcomes {
      switch outcome {
      case .value(let value):
        #expect(value / 1_000_000 == key, "KILN_TEST_SEED=\(seed): key \(key) got \(value)")
        #expect(value % 1_000_000 <= spies[key].loadCount, "KILN_TEST_SEED=\(seed)")
      case .cancelled:
        #expect(cancelled, "KILN_TEST_SEED=\(seed): a caller that was not cancelled got CancellationError")
      case .other(let error):
        Issue.record("KILN_TEST_SEED=\(seed): unexpected \(error)")
      }
    }
    #expect(spies.map(\.loadCount).reduce(0, +) <= outcomes.count, "KILN_TEST_SEED=\(seed)")
    await FlightEvents.current.waitUntilAllEnded()
    #expect(loads.inFlightCount == 0)
  }

  @Test("Paginator: 2,000 random load, loadMore and reset calls always see whole pages in order")
  func paginator() async {
    let seed = TestSeed.current
    let shared = SharedRandom(seed: seed)
    let pageSize = 10
    let lastPage = 40
    let paginator = Paginator { page in
      AnyQuery<[Int], any Error> {
        await Task.yield()
        if shared.int(in: 0..<10) == 0 { throw TestError("flaky") }
        return page < lastPage ? Array(page * pageSize..<(page + 1) * pageSize) : []
      }
    }
    /// Whole pages from page 0, in order: what `data` must always be.
    @Sendable func isWholePages(_ data: [Int]) -> Bool {
      data == Array(0..<data.count) && data.count % pageSize == 0
    }

    let failures = await withTaskGroup(of: String?.self) { group in
      for index in 0..<2_000 {
        var random = SeededRandomNumberGenerator(seed: seed &+ UInt64(index))
        let operation = Int.random(in: 0..<100, using: &random)
        group.addTask {
          await Self.yield(upTo: 2, &random)
          if operation < 3 {
            await paginator.reset()
            return nil
          }
          do {
            let data = operation < 30 ? try await paginator.load() : try await paginator.loadMore()
            return isWholePages(data) ? nil : "returned \(data.count) elements out of order"
          } catch {
            return error is TestError ? nil : "unexpected \(error)"
          }
        }
      }
      var failures: [String] = []
      for await failure in group { if let failure { failures.append(failure) } }
      return failures
    }

    #expect(failures.isEmpty, "KILN_TEST_SEED=\(seed): \(failures.prefix(3))")
    await FlightEvents.current.waitUntilAllEnded()
    #expect(await !paginator.isLoading)
    let data = await paginator.data
    #expect(isWholePages(data), "KILN_TEST_SEED=\(seed)")
    #expect(await paginator.nextPage == data.count / pageSize, "KILN_TEST_SEED=\(seed)")
    if await !paginator.hasMore {
      #expect(data.count == lastPage * pageSize, "KILN_TEST_SEED=\(seed)")
    }
  }
}
