import Foundation
import KilnStorage
import KilnTesting
import Testing

@Suite("MemoryCache", .timeLimit(.minutes(2)))
struct MemoryCacheTests {
  @Test("the subscript stores, replaces, reads and, assigned nil, removes")
  func subscriptRoundTrip() {
    let cache = MemoryCache<String, Int>()
    #expect(cache["a"] == nil)
    cache["a"] = 1
    #expect(cache["a"] == 1)
    cache["a"] = 2
    #expect(cache["a"] == 2)
    #expect(cache.count == 1)
    cache["a"] = nil
    #expect(cache["a"] == nil)
    #expect(cache.count == 0)
    #expect(cache.value(forKey: "a") == nil)
  }

  @Test("the least recently used entry is evicted first, and reads count as use")
  func lruOrder() {
    let cache = MemoryCache<String, Int>(countLimit: 3)
    cache["a"] = 1
    cache["b"] = 2
    cache["c"] = 3
    #expect(cache.keys == ["a", "b", "c"])
    _ = cache["a"]
    #expect(cache.keys == ["b", "c", "a"])
    cache["d"] = 4
    #expect(cache.keys == ["c", "a", "d"])
    #expect(cache["b"] == nil)
    cache["c"] = 30  // a write is a use too
    cache["e"] = 5
    #expect(cache.keys == ["d", "c", "e"])
    #expect(cache["a"] == nil)
    #expect(cache.statistics.evictions == 2)
  }

  @Test("a full cache cycling through many keys keeps the order, contents and counts of a plain LRU list")
  func evictionMatchesAReferenceList() {
    // Past the first eviction (when the table makes room in its dictionary) and through
    // many reuses of freed slots, compared step by step with an array kept in recency order.
    let limit = 50
    let cache = MemoryCache<Int, Int>(countLimit: limit, entryLifetime: nil)
    var reference: [(key: Int, value: Int)] = []
    var evictions = 0
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15  // a fixed xorshift sequence: reproducible
    for step in 0..<3_000 {
      state ^= state << 13
      state ^= state >> 7
      state ^= state << 17
      let key = Int(state % 120)
      if step % 3 == 0 {
        let expected = reference.firstIndex { $0.key == key }.map { reference.remove(at: $0) }
        if let expected { reference.append(expected) }
        #expect(cache[key] == expected?.value)
      } else {
        cache[key] = step
        reference.removeAll { $0.key == key }
        reference.append((key, step))
        if reference.count > limit {
          reference.removeFirst()
          evictions += 1
        }
      }
      #expect(cache.keys == reference.map(\.key))
    }
    #expect(cache.count == limit)
    #expect(cache.statistics.evictions == evictions)
    for (key, value) in reference { #expect(cache[key] == value) }
  }

  @Test("one set that must evict several entries evicts them oldest first and counts each")
  func oneSetEvictsSeveral() {
    let cache = MemoryCache<String, Int>(totalCostLimit: 10, cost: { $0 }, entryLifetime: nil)
    cache["a"] = 3
    cache["b"] = 3
    cache["c"] = 3
    cache["d"] = 9  // a, b and c go in one set
    #expect(cache.keys == ["d"])
    #expect(cache.statistics.evictions == 3)
    cache["e"] = 1
    cache["f"] = 1  // d goes
    #expect(cache.keys == ["e", "f"])
    #expect(cache.statistics.evictions == 4)
    #expect(cache.totalCost == 2)
  }

  @Test("contains answers without making the entry the most recently used")
  func containsDoesNotTouch() {
    let cache = MemoryCache<String, Int>(countLimit: 2)
    cache["a"] = 1
    cache["b"] = 2
    #expect(cache.contains("a"))
    #expect(!cache.contains("z"))
    cache["c"] = 3
    #expect(cache["a"] == nil)
    #expect(cache.keys == ["b", "c"])
  }

  @Test("replacing a value re-counts its cost, and the cost limit evicts by recency")
  func costAccountingOnReplace() {
    let cache = MemoryCache<String, Int>(totalCostLimit: 10, cost: { $0 })
    cache["a"] = 4
    cache["b"] = 4
    #expect(cache.totalCost == 8)
    cache["a"] = 1
    #expect(cache.totalCost == 5)
    cache["c"] = 5
    #expect(cache.totalCost == 10)
    #expect(cache.count == 3)
    cache["a"] = 6  // 6 + 4 + 5 > 10: b, then c go (a is the newest)
    #expect(cache.keys == ["a"])
    #expect(cache.totalCost == 6)
    cache["a"] = nil
    #expect(cache.totalCost == 0)
  }

  @Test("an explicit cost overrides the cost closure, and negative costs count as zero")
  func explicitCost() {
    let cache = MemoryCache<String, Int>(totalCostLimit: 10, cost: { _ in 100 })
    cache.setValue(1, forKey: "a", cost: 7)
    cache.setValue(2, forKey: "b", cost: -5)
    #expect(cache.totalCost == 7)
    #expect(cache["a"] == 1)
    #expect(cache["b"] == 2)
  }

  @Test("a value too costly for the whole cache is refused and the key's older value removed")
  func rejection() {
    let cache = MemoryCache<String, Int>(totalCostLimit: 10, cost: { $0 })
    cache["a"] = 3
    cache["b"] = 4
    cache["a"] = 11
    #expect(cache["a"] == nil)
    #expect(cache["b"] == 4)
    #expect(cache.totalCost == 4)
    #expect(cache.statistics.rejections == 1)
  }

  @Test("a count limit of zero caches nothing")
  func zeroCountLimit() {
    let cache = MemoryCache<String, Int>(countLimit: 0)
    cache["a"] = 1
    #expect(cache["a"] == nil)
    #expect(cache.count == 0)
  }

  @Test("entries expire after the default lifetime, judged by the injected clock, inclusive")
  func defaultLifetime() {
    let now = ManualDate()
    let cache = MemoryCache<String, Int>(entryLifetime: .seconds(60), now: now.provider)
    cache["a"] = 1
    #expect(cache.entry(forKey: "a") == CacheEntry(value: 1, storedAt: now(), expiresAt: now() + 60))
    now.advance(by: .seconds(60))
    #expect(cache["a"] == 1)
    now.advance(by: .milliseconds(1))
    #expect(cache["a"] == nil)
    #expect(cache.count == 0)
    #expect(cache.statistics.expirations == 1)
  }

  @Test("the default lifetime is Loadability's one hour")
  func oneHourByDefault() {
    let now = ManualDate()
    let cache = MemoryCache<String, Int>(now: now.provider)
    cache["a"] = 1
    #expect(cache.entryLifetime == .seconds(3600))
    now.advance(by: .seconds(3600))
    #expect(cache["a"] == 1)
    now.advance(by: .seconds(1))
    #expect(cache["a"] == nil)
  }

  @Test("a per-entry expiry overrides the lifetime; without a lifetime entries stay")
  func perEntryExpiry() {
    let now = ManualDate()
    let cache = MemoryCache<String, Int>(entryLifetime: nil, now: now.provider)
    cache.setValue(1, forKey: "short", expiresAt: now() + 5)
    cache["forever"] = 2
    now.advance(by: .seconds(6))
    #expect(cache["short"] == nil)
    #expect(cache.entry(forKey: "forever")?.expiresAt == nil)
    now.advance(by: .seconds(1_000_000))
    #expect(cache["forever"] == 2)
  }

  @Test("removeExpired sweeps every expired entry at once")
  func removeExpired() {
    let now = ManualDate()
    let cache = MemoryCache<Int, Int>(entryLifetime: .seconds(10), now: now.provider)
    for key in 0..<5 { cache[key] = key }
    now.advance(by: .seconds(5))
    for key in 5..<8 { cache[key] = key }
    now.advance(by: .seconds(6))
    #expect(cache.removeExpired() == 5)
    #expect(cache.count == 3)
    #expect(Set(cache.keys) == [5, 6, 7])
  }

  @Test("setEntry keeps the entry's stored-at date")
  func setEntryKeepsDates() {
    let now = ManualDate()
    let cache = MemoryCache<String, Int>(now: now.provider)
    let old = CacheEntry(value: 7, storedAt: now() - 500, expiresAt: now() + 100)
    cache.setEntry(old, forKey: "k")
    #expect(cache.entry(forKey: "k") == old)
  }

  @Test("removeAll empties the cache and its cost")
  func removeAll() {
    let cache = MemoryCache<Int, Int>(totalCostLimit: 100, cost: { $0 })
    for key in 0..<10 { cache[key] = key }
    cache.removeAll()
    #expect(cache.count == 0)
    #expect(cache.totalCost == 0)
    #expect(cache[3] == nil)
    cache[3] = 3
    #expect(cache[3] == 3)
  }

  @Test("hits and misses are counted")
  func statistics() {
    let cache = MemoryCache<String, Int>()
    cache["a"] = 1
    _ = cache["a"]
    _ = cache["a"]
    _ = cache["b"]
    #expect(cache.statistics == MemoryCacheStatistics(hits: 2, misses: 1))
  }

  @Test("values leave the lock before they are released, so a deinitialiser may use the cache")
  func releaseOutsideLock() {
    let cache = MemoryCache<Int, Tracked>(countLimit: 1)
    let released = Recorder<Int>()
    let onDeinit: @Sendable (Int) -> Void = { id in
      released.append(id)
      _ = cache.count  // would deadlock if called under the cache's lock
    }
    cache[1] = Tracked(1, onDeinit: onDeinit)
    cache[1] = Tracked(2, onDeinit: onDeinit)  // replaces 1
    cache[2] = Tracked(3, onDeinit: onDeinit)  // evicts 2
    cache[2] = nil  // removes 3
    cache[3] = Tracked(4, onDeinit: onDeinit)
    cache.removeAll()  // releases 4
    #expect(released.values == [1, 2, 3, 4])
  }

  @Test("it is a KeyValueStore: async reads and writes honour explicit expiry")
  func keyValueStore() async throws {
    let now = ManualDate()
    let cache = MemoryCache<String, Int>(now: now.provider)
    let store: any KeyValueStore<String, Int> = cache
    try await store.setValue(5, forKey: "k", expiresAt: now() + 1)
    #expect(try await store.value(forKey: "k") == 5)
    let storage = cache.storage(forKey: "k")
    #expect(try await storage.load() == 5)
    now.advance(by: .seconds(2))
    #expect(try await store.entry(forKey: "k") == nil)
    try await store.setValue(6, forKey: "k", expiresAt: nil)
    try await store.removeValue(forKey: "k")
    #expect(try await store.value(forKey: "k") == nil)
    try await store.setValue(6, forKey: "j", expiresAt: nil)
    try await store.removeAll()
    #expect(cache.count == 0)
  }

  @Test("limits hold after every call while many tasks write, read and remove at once")
  func concurrentLimits() async {
    let countLimit = 64
    let costLimit = 500
    let cache = MemoryCache<Int, Int>(countLimit: countLimit, totalCostLimit: costLimit, cost: { $0 % 40 })
    let violations = await withTaskGroup(of: Int.self) { group in
      for worker in 0..<8 {
        group.addTask {
          var generator = SeededRandomNumberGenerator(seed: TestSeed.current &+ UInt64(UInt64(worker)))
          var violations = 0
          for _ in 0..<5_000 {
            let key = Int(generator.next() % 200)
            switch generator.next() % 10 {
            case 0: cache[key] = nil
            case 1...5: cache[key] = Int(generator.next() % 1_000)
            default: _ = cache[key]
            }
            if cache.count > countLimit || cache.totalCost > costLimit { violations += 1 }
          }
          return violations
        }
      }
      return await group.reduce(0, +)
    }
    #expect(violations == 0)
    #expect(cache.count <= countLimit)
    #expect(cache.totalCost <= costLimit)
    let keys = cache.keys
    #expect(keys.count == cache.count)
    #expect(keys.reduce(0) { $0 + (cache.value(forKey: $1) ?? 0) % 40 } == cache.totalCost)
  }
}
