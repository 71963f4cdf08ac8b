#if PostgreSQL
  import Foundation
  import InMemoryLogging
  import KilnTesting
  import Logging
  import PostgresNIO
  import Testing

  @testable import KilnStorage

  @Suite("PostgresCache", .timeLimit(.minutes(2)))
  struct PostgresCacheTests {
    /// Two nodes on one table, each with its own store (as two processes would have).
    private func withTwoNodes(
      _ body: (PostgresClient, PostgresCache<String, String>, PostgresCache<String, String>, Recorder<String?>)
        async throws
        -> Void
    ) async throws {
      try await PostgresTestDatabase.withClient { client in
        let table = PostgresTestDatabase.tableName()
        let invalidations = Recorder<String?>()
        let first = PostgresCache(
          memory: MemoryCache<String, String>(countLimit: 100),
          store: try await PostgresStore<String, String>(client: client, table: table),
          onInvalidate: { invalidations.append($0) })
        let second = PostgresCache(
          memory: MemoryCache<String, String>(countLimit: 100),
          store: try await PostgresStore<String, String>(client: client, table: table))
        try await withThrowingTaskGroup(of: Void.self) { group in
          group.addTask { await first.run() }
          group.addTask { await second.run() }
          defer { group.cancelAll() }
          await first.waitUntilSubscribed()
          await second.waitUntilSubscribed()
          try await body(client, first, second, invalidations)
        }
      }
    }

    @Test("a write on one node drops the key from the other node's memory tier")
    func invalidation() async throws {
      try await withTwoNodes { _, first, second, invalidations in
        try await second.setValue("v1", forKey: "k")
        await invalidations.waitForCount(1)  // the first write's own notification
        #expect(try await first.value(forKey: "k") == "v1")
        #expect(first.memory["k"] == "v1")
        #expect(try await first.value(forKey: "k") == "v1")  // from memory now
        try await second.setValue("v2", forKey: "k")
        await invalidations.waitForCount(2)
        #expect(first.memory["k"] == nil)
        #expect(try await first.value(forKey: "k") == "v2")

        // Its own writes do not invalidate it: "mine" never arrives, the removal after it does.
        try await first.setValue("v3", forKey: "mine")
        try await second.removeValue(forKey: "k")
        await invalidations.waitForCount(3)
        #expect(invalidations.values == ["k", "k", "k"])
        #expect(first.memory["mine"] == "v3")
        #expect(try await first.value(forKey: "k") == nil)

        try await second.removeAll()
        await invalidations.waitForCount(4)
        #expect(invalidations.values.last == .some(nil))
        #expect(first.memory["mine"] == nil)

        var expected = PostgresCacheStatistics()
        expected.memoryHits = 1
        expected.tableHits = 2
        expected.misses = 1
        expected.invalidatedKeys = 3
        expected.invalidatedAll = 1
        expected.subscriptions = 1
        #expect(first.statistics == expected)
        let readings = first.counterReadings()
        #expect(counterValue(readings, "kiln_postgres_cache_lookups_total", [("result", "table_hit")]) == 2)
        #expect(counterValue(readings, "kiln_postgres_cache_invalidations_total", [("scope", "key")]) == 3)
        #expect(counterValue(readings, "kiln_postgres_cache_listening") == 1)
      }
    }

    @Test("a key too long for a notification drops the whole memory tier")
    func longKeys() async throws {
      try await withTwoNodes { _, first, second, invalidations in
        let long = String(repeating: "L", count: 5_000)
        try await first.setValue("short", forKey: "s")
        try await second.setValue("v", forKey: long)
        await invalidations.waitForCount(1)
        #expect(invalidations.values == [nil])
        #expect(first.memory["s"] == nil)
        #expect(first.statistics.invalidatedAll == 1)
        #expect(first.statistics.invalidatedKeys == 0)
        #expect(try await first.value(forKey: long) == "v")
      }
    }

    @Test("after a lost connection the node subscribes again and distrusts its memory")
    func resubscription() async throws {
      try await withTwoNodes { client, first, second, _ in
        try await first.setValue("old", forKey: "k")
        #expect(first.memory["k"] == "old")
        // Cut every listening session; the write below happens while nobody listens.
        let listen = "LISTEN \"\(first.store.channel)\";"
        try await client.query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = \(listen) AND pid <> pg_backend_pid()"
        ).drain()
        try await second.store.setValue("new", forKey: "k", expiresAt: nil)
        await first.waitUntilSubscribed(count: 2)
        #expect(first.subscriptionCount >= 2)
        #expect(first.statistics.subscriptions >= 2)
        #expect(first.statistics.connectionLosses >= 1)
        #expect(first.memory["k"] == nil)
        #expect(try await first.value(forKey: "k") == "new")
      }
    }

    @Test("run() logs each subscription at info and a lost connection at warning; reads and writes log nothing")
    func logging() async throws {
      try await PostgresTestDatabase.withClient { client in
        let handler = InMemoryLogHandler()
        var logger = Logger(label: "test.postgres-cache") { _ in handler }
        logger.logLevel = .debug
        let cache = PostgresCache(
          memory: MemoryCache<String, String>(countLimit: 10),
          store: try await PostgresStore<String, String>(client: client, table: PostgresTestDatabase.tableName()),
          reconnectDelay: .milliseconds(10), logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
          group.addTask { await cache.run() }
          defer { group.cancelAll() }
          await cache.waitUntilSubscribed()
          try await cache.setValue("v", forKey: "k")
          #expect(try await cache.value(forKey: "k") == "v")
          #expect(handler.entries.map(\.level) == [.info])
          let listen = "LISTEN \"\(cache.store.channel)\";"
          try await client.query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = \(listen) AND pid <> pg_backend_pid()"
          ).drain()
          await cache.waitUntilSubscribed(count: 2)
        }
        let entries = handler.entries
        #expect(entries.map(\.level) == [.info, .warning, .info])
        #expect(entries[1].message.description.contains("memory is distrusted"))
        #expect(entries.allSatisfy { $0.metadata["kiln_channel"] == .string(cache.store.channel) })
      }
    }

    @Test("while not subscribed, reads go to the table and nothing is kept")
    func notListening() async throws {
      try await PostgresTestDatabase.withClient { client in
        let cache = PostgresCache(
          memory: MemoryCache<String, String>(countLimit: 10),
          store: try await PostgresStore<String, String>(client: client, table: PostgresTestDatabase.tableName()))
        #expect(!cache.isListening)
        try await cache.setValue("v", forKey: "k")
        #expect(cache.memory["k"] == nil)
        #expect(try await cache.value(forKey: "k") == "v")
        #expect(cache.memory["k"] == nil)
      }
    }
  }
#endif
