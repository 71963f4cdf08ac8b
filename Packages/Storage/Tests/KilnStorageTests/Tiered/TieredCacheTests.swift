import Foundation
import KilnStorage
import KilnTesting
import Testing

@Suite("TieredCache", .timeLimit(.minutes(1)))
struct TieredCacheTests {
  @Test("a memory miss falls through to the second tier and promotes the entry with its dates")
  func fallThroughAndPromote() async throws {
    let now = ManualDate()
    let memory = MemoryCache<String, Int>(entryLifetime: nil, now: now.provider)
    let disk = SpyKeyValueStore<String, Int>(now: now.provider)
    let cache = TieredCache(memory: memory, disk: disk, now: now.provider)
    try await disk.setValue(7, forKey: "k", expiresAt: now() + 100)
    let stored = now()
    now.advance(by: .seconds(30))

    #expect(try await cache.entry(forKey: "k") == CacheEntry(value: 7, storedAt: stored, expiresAt: stored + 100))
    #expect(memory.entry(forKey: "k") == CacheEntry(value: 7, storedAt: stored, expiresAt: stored + 100))
    let readsBefore = disk.readCount
    #expect(try await cache.value(forKey: "k") == 7)
    #expect(disk.readCount == readsBefore)  // served by memory now
  }

  @Test("writes go to both tiers with one expiry")
  func writesToBoth() async throws {
    let now = ManualDate()
    let memory = MemoryCache<String, Int>(entryLifetime: .seconds(5), now: now.provider)
    let disk = SpyKeyValueStore<String, Int>(defaultLifetime: .seconds(999), now: now.provider)
    let cache = TieredCache(memory: memory, disk: disk, entryLifetime: .seconds(60), now: now.provider)
    try await cache.setValue(1, forKey: "k")
    #expect(memory.entry(forKey: "k")?.expiresAt == now() + 60)
    #expect(disk.entries["k"]?.expiresAt == now() + 60)
    now.advance(by: .seconds(61))
    #expect(try await cache.value(forKey: "k") == nil)
  }

  @Test("without a lifetime, entries never expire in either tier")
  func noLifetime() async throws {
    let now = ManualDate()
    let disk = SpyKeyValueStore<String, Int>(defaultLifetime: .seconds(1), now: now.provider)
    let cache = TieredCache(memory: MemoryCache<String, Int>(now: now.provider), disk: disk, now: now.provider)
    try await cache.setValue(1, forKey: "k")
    now.advance(by: .seconds(1_000_000))
    #expect(try await cache.value(forKey: "k") == 1)
    #expect(try await disk.value(forKey: "k") == 1)
  }

  @Test("a failed second-tier write leaves neither tier with the new value")
  func failedWrite() async throws {
    let disk = SpyKeyValueStore<String, Int>()
    let memory = MemoryCache<String, Int>()
    let cache = TieredCache(memory: memory, disk: disk)
    disk.failWrites(with: TestError("disk full"))
    await #expect(throws: TestError("disk full")) { try await cache.setValue(1, forKey: "k") }
    #expect(memory["k"] == nil)
  }

  @Test("removals clear both tiers")
  func removals() async throws {
    let disk = SpyKeyValueStore<String, Int>()
    let memory = MemoryCache<String, Int>()
    let cache = TieredCache(memory: memory, disk: disk)
    try await cache.setValue(1, forKey: "a")
    try await cache.setValue(2, forKey: "b")
    try await cache.removeValue(forKey: "a")
    #expect(memory["a"] == nil)
    #expect(try await disk.value(forKey: "a") == nil)
    try await cache.removeAll()
    #expect(memory.count == 0)
    #expect(disk.entries.isEmpty)
  }

  enum Overtaking: String, CaseIterable, Sendable {
    case removal, write, removeAll
  }

  @Test(
    "a second-tier read overtaken by a removal or write does not put its old value into memory",
    arguments: Overtaking.allCases)
  func overtakenPromotion(overtaking: Overtaking) async throws {
    let disk = HeldReadStore<String, Int>()
    let cache = TieredCache(memory: MemoryCache<String, Int>(entryLifetime: nil), disk: disk)
    try await disk.setValue(1, forKey: "k", expiresAt: nil)
    let reader = Task { try await cache.value(forKey: "k") }
    try await disk.hasRead.wait()  // the reader holds 1 from the second tier, not yet promoted
    switch overtaking {
    case .removal: try await cache.removeValue(forKey: "k")
    case .write: try await cache.setValue(2, forKey: "k")
    case .removeAll: try await cache.removeAll()
    }
    disk.release.open()
    #expect(try await reader.value == 1)
    let expected = overtaking == .write ? 2 : nil
    #expect(cache.memory["k"] == expected)
    #expect(try await cache.value(forKey: "k") == expected)
  }

  @Test("a second-tier read that nothing overtakes is promoted")
  func undisturbedPromotion() async throws {
    let disk = HeldReadStore<String, Int>()
    let cache = TieredCache(memory: MemoryCache<String, Int>(entryLifetime: nil), disk: disk)
    try await disk.setValue(1, forKey: "k", expiresAt: nil)
    let reader = Task { try await cache.value(forKey: "k") }
    try await disk.hasRead.wait()
    disk.release.open()
    #expect(try await reader.value == 1)
    #expect(cache.memory["k"] == 1)
  }

  @Test("it works over a real DiskCache across a restart")
  func overDiskCache() async throws {
    try await withTemporaryDirectory { directory in
      let first = TieredCache(
        memory: MemoryCache<String, String>(), disk: try DiskCache<String, String>(directory: directory))
      try await first.setValue("v", forKey: "k")
      let second = TieredCache(
        memory: MemoryCache<String, String>(), disk: try DiskCache<String, String>(directory: directory))
      #expect(second.memory["k"] == nil)
      #expect(try await second.value(forKey: "k") == "v")
      #expect(second.memory["k"] == "v")
    }
  }
}

@Suite("SharedCache", .timeLimit(.minutes(1)))
struct SharedCacheTests {
  enum Numbers: SharedCache {
    static let shared = MemoryCache<String, Int>()
  }

  @Test("the shared instance is one store, reachable through the type")
  func sharedInstance() async throws {
    try await Numbers.setValue(1, forKey: "shared-test")
    #expect(Numbers.shared["shared-test"] == 1)
    #expect(try await Numbers.value(forKey: "shared-test") == 1)
    #expect(try await Numbers.entry(forKey: "shared-test")?.value == 1)
    func read<C: SharedCache>(_ cache: C.Type, _ key: C.Store.Key) async throws -> C.Store.Value? {
      try await cache.value(forKey: key)
    }
    #expect(try await read(Numbers.self, "shared-test") == 1)
    try await Numbers.removeValue(forKey: "shared-test")
    #expect(Numbers.shared["shared-test"] == nil)
    try await Numbers.removeAll()
    #expect(Numbers.shared.count == 0)
  }
}

/// A second tier whose reads, once they have read their entry, wait for ``release`` before
/// returning it; ``hasRead`` opens when a read got that far.
final class HeldReadStore<Key: Hashable & Sendable, Value: Sendable>: KeyValueStore, Sendable {
  let stored = SpyKeyValueStore<Key, Value>()
  let hasRead = Gate()
  let release = Gate()

  func entry(forKey key: Key) async throws -> CacheEntry<Value>? {
    let entry = try await stored.entry(forKey: key)
    hasRead.open()
    try await release.wait()
    return entry
  }

  func setValue(_ value: Value, forKey key: Key, expiresAt: Date?) async throws {
    try await stored.setValue(value, forKey: key, expiresAt: expiresAt)
  }

  func removeValue(forKey key: Key) async throws {
    try await stored.removeValue(forKey: key)
  }

  func removeAll() async throws {
    try await stored.removeAll()
  }
}
