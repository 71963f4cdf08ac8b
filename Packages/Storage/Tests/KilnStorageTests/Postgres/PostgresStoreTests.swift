#if PostgreSQL
  import Foundation
  import KilnTesting
  import PostgresNIO
  import Testing

  @testable import KilnStorage

  @Suite("PostgresStore", .timeLimit(.minutes(2)))
  struct PostgresStoreTests {
    @Test("values round-trip, and a second store on the table reads them")
    func roundTrip() async throws {
      try await PostgresTestDatabase.withClient { client in
        let table = PostgresTestDatabase.tableName()
        let now = ManualDate()
        let store = try await PostgresStore<String, Article>(client: client, table: table, now: now.provider)
        try await store.setValue(Article(id: 1, title: "one"), forKey: "a")
        try await store.setValue(Article(id: 2, title: "two"), forKey: "b")
        try await store.setValue(Article(id: 3, title: "three"), forKey: "a")
        #expect(
          try await store.entry(forKey: "a") == CacheEntry(value: Article(id: 3, title: "three"), storedAt: now()))
        #expect(try await store.value(forKey: "missing") == nil)

        let other = try await PostgresStore<String, Article>(client: client, table: table)
        #expect(try await other.value(forKey: "b") == Article(id: 2, title: "two"))
        #expect(try await other.count == 2)
        try await other.removeValue(forKey: "a")
        #expect(try await store.value(forKey: "a") == nil)
        try await store.removeAll()
        #expect(try await other.count == 0)
      }
    }

    @Test("the schema version is recorded and a newer one is refused")
    func schemaVersion() async throws {
      try await PostgresTestDatabase.withClient { client in
        let table = PostgresTestDatabase.tableName()
        _ = try await PostgresStore<String, String>(client: client, table: table)
        var versions: [Int32] = []
        for try await version in try await client.query(
          "SELECT version FROM kiln_store_schema WHERE table_name = \(table)"
        ).decode(Int32.self) {
          versions.append(version)
        }
        #expect(versions == [1])
        try await client.query("UPDATE kiln_store_schema SET version = 2 WHERE table_name = \(table)")
        await #expect {
          _ = try await PostgresStore<String, String>(client: client, table: table)
        } throws: { error in
          if case .incompatibleTable(table, _) = error as? PostgresStoreError { return true }
          return false
        }
      }
    }

    @Test("a table of another layout is refused and left as it is")
    func foreignTable() async throws {
      try await PostgresTestDatabase.withClient { client in
        let table = PostgresTestDatabase.tableName()
        try await client.query("CREATE TABLE \(unescaped: table) (key text PRIMARY KEY, value text)")
        try await client.query("INSERT INTO \(unescaped: table) VALUES ('k', 'theirs')")
        await #expect {
          _ = try await PostgresStore<String, String>(client: client, table: table)
        } throws: { error in
          if case .incompatibleTable(table, _) = error as? PostgresStoreError { return true }
          return false
        }
        var values: [String] = []
        for try await value in try await client.query("SELECT value FROM \(unescaped: table)").decode(String.self) {
          values.append(value)
        }
        #expect(values == ["theirs"])
      }
    }

    @Test(
      "invalid table names are a typed error",
      arguments: ["", "1table", "bad name", "x\"; DROP TABLE kiln_store_schema; --", String(repeating: "t", count: 49)])
    func invalidTableNames(_ name: String) async throws {
      try await PostgresTestDatabase.withClient { client in
        await #expect {
          _ = try await PostgresStore<String, String>(client: client, table: name)
        } throws: { error in
          if case .invalidTableName(name) = error as? PostgresStoreError { return true }
          return false
        }
      }
    }

    /// Keys that would break SQL built from text, C strings, index entries or payloads.
    static let hostileKeyCases: [String] = {
      // 10 KB that hardly compress: longer than a B-tree index entry may be.
      var generator = SystemRandomNumberGenerator()
      let scalars = (0..<10_240).map { _ in Character(UnicodeScalar(UInt8.random(in: 33...126, using: &generator))) }
      return [
        "'; DROP TABLE kiln_store_schema; --", "a\u{0}b", String(repeating: "k", count: 10_240), "🔥🧱 émoji",
        "\\x00'\"$1", "", String(scalars),
      ]
    }()

    @Test("hostile keys round-trip and stay data", arguments: PostgresStoreTests.hostileKeyCases)
    func hostileKeys(_ key: String) async throws {
      try await PostgresTestDatabase.withClient { client in
        let store = try await PostgresStore<String, String>(client: client, table: PostgresTestDatabase.tableName())
        try await store.setValue("value of \(key.prefix(20))", forKey: key)
        try await store.setValue("other", forKey: key + "x")
        #expect(try await store.value(forKey: key) == "value of \(key.prefix(20))")
        #expect(try await store.count == 2)
        try await store.setValues([(key, "batched")])
        #expect(try await store.value(forKey: key) == "batched")
        try await store.removeValue(forKey: key)
        #expect(try await store.value(forKey: key) == nil)
        #expect(try await store.value(forKey: key + "x") == "other")
        var schemas = 0
        for try await _ in try await client.query("SELECT 1 FROM kiln_store_schema LIMIT 1") { schemas += 1 }
        #expect(schemas == 1)
      }
    }

    @Test("a batch is written in one statement: last value per key, all or none")
    func batches() async throws {
      try await PostgresTestDatabase.withClient { client in
        let store = try await PostgresStore<String, Int>(client: client, table: PostgresTestDatabase.tableName())
        let entries = (0..<500).map { ("key-\($0)", $0) } + [("key-7", 7_000)]
        try await store.setValues(entries)
        #expect(try await store.count == 500)
        #expect(try await store.value(forKey: "key-7") == 7_000)
        #expect(try await store.value(forKey: "key-499") == 499)
        try await store.setValues([(String, Int)]())
        #expect(try await store.count == 500)
      }
    }

    @Test("a value that fails to encode writes nothing of its batch")
    func encodingFailure() async throws {
      try await PostgresTestDatabase.withClient { client in
        let codec = StoreCodec<Int>(
          encode: { value in
            guard value >= 0 else { throw TestError("negative") }
            return Data(String(value).utf8)
          },
          decode: { Int(String(decoding: $0, as: UTF8.self)) ?? 0 })
        let store = try await PostgresStore<String, Int>(
          client: client, table: PostgresTestDatabase.tableName(), keyCodec: .automatic, valueCodec: codec)
        await #expect {
          try await store.setValues([("a", 1), ("b", -1), ("c", 3)])
        } throws: { error in
          if case .valueEncodingFailed = error as? PostgresStoreError { return true }
          return false
        }
        #expect(try await store.count == 0)
      }
    }

    @Test("expired rows are never returned and the background sweep deletes them on the injected clock")
    func expiry() async throws {
      try await PostgresTestDatabase.withClient { client in
        let table = PostgresTestDatabase.tableName()
        let now = ManualDate()
        let clock = ManualClock()
        // No operation time limit: its timers would sleep on the manual clock beside the sweep.
        let store = try await PostgresStore<String, String>(
          client: client, table: table, entryLifetime: .seconds(60), sweepInterval: .seconds(30),
          operationTimeout: nil, now: now.provider, clock: clock)
        try await store.setValue("short", forKey: "a", expiresAt: now().addingTimeInterval(10))
        try await store.setValue("default", forKey: "b")
        try await store.setValue("forever", forKey: "c", expiresAt: .distantFuture)
        #expect(try await store.entry(forKey: "b")?.expiresAt == now().addingTimeInterval(60))
        now.advance(by: .seconds(11))
        #expect(try await store.value(forKey: "a") == nil)
        #expect(try await store.value(forKey: "b") == "default")
        #expect(try await store.count == 2)

        let sweeper = Task { await store.run() }
        defer { sweeper.cancel() }
        await clock.waitForSleepers()
        now.advance(by: .seconds(60))
        clock.advance(by: .seconds(30))
        // The sweep runs, then sleeps again.
        await clock.waitForSleepers()
        var rows: [String] = []
        for try await key in try await client.query("SELECT convert_from(key, 'UTF8') FROM \(unescaped: table)")
          .decode(String.self)
        {
          rows.append(key)
        }
        #expect(rows == ["c"])
      }
    }

    @Test("a corrupt or foreign row is a miss, never a crash")
    func corruptRows() async throws {
      try await PostgresTestDatabase.withClient { client in
        let table = PostgresTestDatabase.tableName()
        let store = try await PostgresStore<String, Article>(client: client, table: table)
        try await store.setValue(Article(id: 1, title: "one"), forKey: "good")
        let garbage = ByteBuffer(bytes: [0xFF, 0x00, 0x13])
        let key = ByteBuffer(bytes: Array("bad".utf8))
        try await client.query(
          "INSERT INTO \(unescaped: table) (key, value, stored_at) VALUES (\(key), \(garbage), now())")
        #expect(try await store.value(forKey: "bad") == nil)
        #expect(try await store.value(forKey: "good") == Article(id: 1, title: "one"))
      }
    }
  }
#endif
