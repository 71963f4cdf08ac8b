import Foundation
import KilnCore
import KilnRepository
import KilnRepositoryTesting
import KilnTesting
import Testing

@Suite("Repository counters", .timeLimit(.minutes(1)))
struct RepositoryStatisticsTests {
  @Test("fetches started and how they ended, joins, cache reads and writes, emissions and params are counted")
  func counters() async throws {
    let clock = ManualClock()
    let repository = Repository<String, Int>(
      store: MemoryCache(entryLifetime: nil, now: clock.dateProvider), clock: clock)
    let fetcher = ControlledFetcher<String, Int>()
    let flowable = AnyStoreFlowable.from(cacher: repository, fetcher: fetcher, param: "a")
    let states = LoadingStateRecorder(flowable.publish())
    await fetcher.waitForCall(0)
    // Two callers who want data from cache or origin join the fetch in flight.
    let joiners = (0..<2).map { _ in Task { try await flowable.requireData(from: .both) } }
    try #require(await poll(timeout: .seconds(30)) { repository.statistics.fetchJoins == 2 })
    fetcher.succeed(0, with: 7)
    for joiner in joiners { #expect(try await joiner.value == 7) }
    await states.waitForState { $0.content == 7 }

    let refresh = Task { await flowable.refresh() }
    await fetcher.waitForCall(1)
    fetcher.fail(1, with: TestError("offline"))
    await refresh.value

    let statistics = repository.statistics
    #expect(statistics.fetches == 2)
    #expect(statistics.fetchSuccesses == 1)
    #expect(statistics.fetchFailures == 1)
    #expect(statistics.fetchJoins == 2)
    #expect(statistics.cacheWrites == 1)
    #expect(statistics.cacheReads >= 1)
    #expect(statistics.emissions >= 4)  // loading, completed(7), loading, error keeping 7
    #expect(statistics.params == 1)
    let readings = repository.counterReadings()
    #expect(readings.first { $0.name == "kiln_repository_params" }?.kind == .gauge)
    #expect(counterValue(readings, "kiln_repository_fetches_total", [("outcome", "failed")]) == 1)
    await states.stop()
  }
}
