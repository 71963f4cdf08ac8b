import Foundation
import KilnCore
import KilnStorage
import KilnTesting
import Testing

@Suite("DiskCache and SQLiteStore counters, on real files", .timeLimit(.minutes(1)))
struct StoreCountersTests {
  @Test("DiskCache counts hits, misses, expired and corrupt reads, writes and bytes, evictions, removals, expirations")
  func diskCache() async throws {
    try await withTemporaryDirectory { directory in
      let date = ManualDate()
      let cache = try DiskCache<String, String>(directory: directory, sizeLimit: 400, now: date.provider)
      let big = String(repeating: "x", count: 120)
      try await cache.setValue(big, forKey: "a", expiresAt: nil)
      try await cache.setValue(big, forKey: "b", expiresAt: nil)
      try await cache.setValue("short", forKey: "c", expiresAt: date.now.addingTimeInterval(10))
      try await cache.setValue(big, forKey: "d", expiresAt: nil)  // over 400 bytes: evicts "a"
      #expect(try await cache.value(forKey: "b") == big)
      #expect(try await cache.value(forKey: "a") == nil)
      date.advance(by: .seconds(20))
      #expect(try await cache.value(forKey: "c") == nil)  // expired
      try Data("garbage".utf8).write(to: try cache.fileURL(forKey: "d"))
      #expect(try await cache.value(forKey: "d") == nil)  // corrupt
      try await cache.setValue("again", forKey: "e", expiresAt: date.now.addingTimeInterval(-1))
      #expect(try await cache.removeExpired() == 1)
      try await cache.removeValue(forKey: "b")

      let statistics = cache.statistics
      #expect(statistics.hits == 1)
      #expect(statistics.misses == 3)
      #expect(statistics.expiredReads == 1)
      #expect(statistics.unreadableEntries == 1)
      #expect(statistics.writes == 5)
      #expect(statistics.writtenBytes > 3 * 120)
      #expect(statistics.evictions == 1)
      #expect(statistics.expirations == 1)
      #expect(statistics.removals == 1)
      let readings = cache.counterReadings()
      #expect(counterValue(readings, "kiln_disk_cache_lookups_total", [("result", "hit")]) == 1)
      #expect(counterValue(readings, "kiln_disk_cache_evictions_total") == 1)
    }
  }

  @Test("SQLiteStore counts hits, misses, expired and unreadable reads, writes and bytes, removals, expirations")
  func sqliteStore() async throws {
    try await withTemporaryDirectory { directory in
      let date = ManualDate()
      let url = directory.appending(path: "store.sqlite")
      let store = try SQLiteStore<String, Int>(url: url, now: date.provider)
      try await store.setValues([("a", 1), ("b", 2)])
      try await store.setValue(3, forKey: "c", expiresAt: date.now.addingTimeInterval(10))
      #expect(try await store.value(forKey: "a") == 1)
      #expect(try await store.value(forKey: "z") == nil)
      date.advance(by: .seconds(20))
      #expect(try await store.value(forKey: "c") == nil)
      #expect(try await store.removeExpired() == 1)
      try await store.removeValue(forKey: "b")
      // The same table read as another value type: "a" is unreadable, so a miss.
      let strings = try SQLiteStore<String, [String]>(url: url, now: date.provider)
      #expect(try await strings.value(forKey: "a") == nil)

      let statistics = store.statistics
      #expect(statistics.hits == 1)
      #expect(statistics.misses == 2)
      #expect(statistics.expiredReads == 1)
      #expect(statistics.writes == 3)
      #expect(statistics.writtenBytes > 0)
      #expect(statistics.expirations == 1)
      #expect(statistics.removals == 1)
      #expect(strings.statistics.unreadableEntries == 1)
      #expect(strings.statistics.misses == 1)
      #expect(counterValue(store.counterReadings(), "kiln_sqlite_store_writes_total") == 3)
      await strings.close()
      await store.close()
    }
  }

  @Test(
    "SerializableCache counts hits, misses, expired reads, writes and journal bytes, evictions, removals, expirations")
  func serializableCache() async throws {
    try await withTemporaryDirectory { directory in
      let date = ManualDate()
      let cache = try SerializableCache<String, String>.load(
        name: "counted", directory: directory, entryLifetime: nil, countLimit: 2, writeDelay: .zero,
        now: date.provider)
      try cache.setValue("1", forKey: "a", expiresAt: nil)
      try cache.setValue("2", forKey: "b", expiresAt: date.now.addingTimeInterval(10))
      try cache.setValue("3", forKey: "c", expiresAt: nil)  // over the count limit: evicts "a"
      #expect(cache["a"] == nil)
      #expect(cache["c"] == "3")
      date.advance(by: .seconds(20))
      #expect(cache["b"] == nil)  // expired
      try cache.setValue("4", forKey: "d", expiresAt: date.now.addingTimeInterval(-1))
      #expect(cache.removeExpired() == 1)
      cache.removeValue(forKey: "c")
      try await cache.flush()

      let statistics = cache.statistics
      #expect(statistics.hits == 1)
      #expect(statistics.misses == 2)
      #expect(statistics.expiredReads == 1)
      #expect(statistics.unreadableEntries == 0)
      #expect(statistics.writes == 4)
      #expect(statistics.writtenBytes > 0)
      #expect(statistics.evictions == 1)
      #expect(statistics.expirations == 1)
      #expect(statistics.removals == 1)
      #expect(counterValue(cache.counterReadings(), "kiln_serializable_cache_writes_total") == 4)
    }
  }

  @Test("UserDefaultsStore counts hits, misses, expired and undecodable reads, writes, removals")
  func userDefaultsStore() async throws {
    let suite = "kiln.counters.\(UUID().uuidString)"
    let defaults = try #require(UserDefaults(suiteName: suite))
    defer { defaults.removePersistentDomain(forName: suite) }
    let date = ManualDate()
    let store = UserDefaultsStore<String, Int>(defaults: defaults, now: date.provider)
    try store.setValue(1, forKey: "a", expiresAt: nil)
    try store.setValue(2, forKey: "b", expiresAt: date.now.addingTimeInterval(10))
    #expect(try store.entry(forKey: "a")?.value == 1)
    #expect(try store.entry(forKey: "z") == nil)
    date.advance(by: .seconds(20))
    #expect(try store.entry(forKey: "b") == nil)  // expired
    try store.setValue(3, forKey: "c", expiresAt: nil)
    // The same preferences read as another value type: "c" does not decode.
    let strings = UserDefaultsStore<String, [String]>(defaults: defaults, now: date.provider)
    #expect(try strings.entry(forKey: "c") == nil)
    try store.removeValue(forKey: "a")

    let statistics = store.statistics
    #expect(statistics.hits == 1)
    #expect(statistics.misses == 2)
    #expect(statistics.expiredReads == 1)
    #expect(statistics.writes == 3)
    #expect(statistics.writtenBytes > 0)
    #expect(statistics.removals == 1)
    #expect(strings.statistics.unreadableEntries == 1)
    #expect(strings.statistics.misses == 1)
    #expect(counterValue(store.counterReadings(), "kiln_user_defaults_store_lookups_total", [("result", "miss")]) == 2)
  }

  @Test("TieredCache counts where each read was answered: memory, the second tier (real files), or neither")
  func tiered() async throws {
    try await withTemporaryDirectory { directory in
      let memory = MemoryCache<String, String>(entryLifetime: nil)
      let disk = try DiskCache<String, String>(directory: directory)
      let cache = TieredCache(memory: memory, disk: disk)
      try await disk.setValue("from disk", forKey: "d", expiresAt: nil)
      try await cache.setValue("both", forKey: "b", expiresAt: nil)
      #expect(try await cache.value(forKey: "b") == "both")  // memory
      #expect(try await cache.value(forKey: "d") == "from disk")  // second tier, promoted
      #expect(try await cache.value(forKey: "d") == "from disk")  // memory now
      #expect(try await cache.value(forKey: "x") == nil)
      let readings = cache.counterReadings()
      #expect(counterValue(readings, "kiln_tiered_cache_lookups_total", [("result", "memory_hit")]) == 2)
      #expect(counterValue(readings, "kiln_tiered_cache_lookups_total", [("result", "second_tier_hit")]) == 1)
      #expect(counterValue(readings, "kiln_tiered_cache_lookups_total", [("result", "miss")]) == 1)
      #expect(disk.statistics.hits == 1)
      #expect(disk.statistics.misses == 1)
    }
  }
}
