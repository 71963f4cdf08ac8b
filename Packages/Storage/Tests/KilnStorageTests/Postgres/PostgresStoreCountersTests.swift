#if PostgreSQL
  import Foundation
  import KilnTesting
  import PostgresNIO
  import Testing

  @testable import KilnStorage

  @Suite("PostgresStore counters, against the throwaway PostgreSQL", .timeLimit(.minutes(1)))
  struct PostgresStoreCountersTests {
    @Test("reads, unreadable rows, writes and bytes, removals and expirations are counted")
    func counters() async throws {
      try await PostgresTestDatabase.withClient { client in
        let table = PostgresTestDatabase.tableName()
        let now = ManualDate()
        let store = try await PostgresStore<String, Int>(client: client, table: table, now: now.provider)
        try await store.setValues([("a", 1), ("b", 2)])
        try await store.setValue(3, forKey: "c", expiresAt: now().addingTimeInterval(10))
        #expect(try await store.value(forKey: "a") == 1)
        #expect(try await store.value(forKey: "z") == nil)
        now.advance(by: .seconds(20))
        #expect(try await store.removeExpired() == 1)
        try await store.removeValue(forKey: "b")
        let strings = try await PostgresStore<String, [String]>(client: client, table: table, now: now.provider)
        #expect(try await strings.value(forKey: "a") == nil)

        #expect(store.statistics.hits == 1)
        #expect(store.statistics.misses == 1)
        #expect(store.statistics.writes == 3)
        #expect(store.statistics.writtenBytes > 0)
        #expect(store.statistics.expirations == 1)
        #expect(store.statistics.removals == 1)
        #expect(strings.statistics.unreadableEntries == 1)
        #expect(strings.statistics.misses == 1)
        #expect(counterValue(store.counterReadings(), "kiln_postgres_store_writes_total") == 3)
      }
    }
  }
#endif
