#if PostgreSQL && ServiceLifecycle
  import Foundation
  import KilnTesting
  import Logging
  import PostgresNIO
  import ServiceLifecycle
  import Testing

  @testable import KilnStorage

  @Suite(
    "PostgresStore and PostgresCache in a ServiceGroup (PostgreSQL and ServiceLifecycle traits)",
    .timeLimit(.minutes(1)))
  struct PostgresServiceTests {
    @Test("the group runs the store's sweeps and the cache's listener, and a graceful shutdown ends both")
    func gracefulShutdown() async throws {
      try await PostgresTestDatabase.withClient { client in
        let table = PostgresTestDatabase.tableName()
        let clock = ManualClock()
        let store = try await PostgresStore<String, String>(client: client, table: table, clock: clock)
        let cache = PostgresCache(memory: MemoryCache<String, String>(countLimit: 10), store: store)
        let group = ServiceGroup(
          configuration: ServiceGroupConfiguration(services: [store, cache], logger: Logger(label: "test")))
        let running = Task { try await group.run() }
        await cache.waitUntilSubscribed()
        try await cache.setValue("v", forKey: "k", expiresAt: nil)
        #expect(try await cache.value(forKey: "k") == "v")
        // The group runs the sweeps: an expired row goes at the next interval.
        try await store.setValue("old", forKey: "expired", expiresAt: Date(timeIntervalSinceNow: -60))
        // Advanced only while no sweep runs (the clock also bounds each statement): one step,
        // then wait for the sweep; once more if the loop was not asleep yet.
        var swept = false
        for _ in 0..<5 where !swept {
          clock.advance(by: store.sweepInterval)
          swept = await poll(timeout: .seconds(5)) { store.statistics.expirations > 0 }
        }
        #expect(swept)
        #expect(store.statistics.expirations == 1)

        // The group returns only once every service's run() has returned: the sweep loop and
        // the listener both ended (the suite's time limit fails a run() that ignored it).
        await group.triggerGracefulShutdown()
        try await running.value
        #expect(try await cache.value(forKey: "k") == "v", "the store still answers: the client was not shut down")
      }
    }
  }
#endif
