import Foundation
import KilnCore
import KilnTesting
import Testing

@Suite("KeyValueStore", .timeLimit(.minutes(1)))
struct KeyValueStoreTests {
  @Test("storage(forKey:) reads, saves and clears one key and leaves the others alone")
  func singleKeyView() async throws {
    let now = ManualDate()
    let store = SpyKeyValueStore<String, Int>(now: now.provider)
    try await store.setValue(1, forKey: "other")
    let storage = store.storage(forKey: "mine")

    await #expect(throws: StorageError.empty) { try await storage.load() }
    #expect(await storage.timestamp == nil)

    try await storage.save(5)
    #expect(try await storage.load() == 5)
    #expect(try await store.value(forKey: "mine") == 5)
    #expect(await storage.timestamp == now())

    now.advance(by: .seconds(30))
    try await storage.save(6)
    #expect(try await storage.load() == 6)
    #expect(await storage.timestamp == now())

    try await storage.clear()
    await #expect(throws: StorageError.empty) { try await storage.load() }
    #expect(try await store.value(forKey: "other") == 1)
    #expect(storage.key == "mine")
  }

  @Test("the single-key view saves with the store's default lifetime and expires with it")
  func viewUsesDefaultLifetime() async throws {
    let now = ManualDate()
    let store = SpyKeyValueStore<String, Int>(defaultLifetime: .seconds(10), now: now.provider)
    let storage = store.storage(forKey: "k")
    try await storage.save(1)
    #expect(store.entries["k"]?.expiresAt == now().addingTimeInterval(10))
    now.advance(by: .seconds(10))
    #expect(try await storage.load() == 1)
    now.advance(by: .milliseconds(1))
    await #expect(throws: StorageError.empty) { try await storage.load() }
    #expect(await storage.timestamp == nil)
  }

  @Test("a read error of the store reaches load, and timestamp reads as nil")
  func readErrors() async {
    let store = SpyKeyValueStore<String, Int>()
    store.failReads(with: TestError("disk"))
    let storage = store.storage(forKey: "k")
    await #expect(throws: TestError("disk")) { try await storage.load() }
    #expect(await storage.timestamp == nil)
  }

  @Test("a write error of the store reaches save and clear")
  func writeErrors() async {
    let store = SpyKeyValueStore<String, Int>()
    store.failWrites(with: TestError("full"))
    let storage = store.storage(forKey: "k")
    await #expect(throws: TestError("full")) { try await storage.save(1) }
    await #expect(throws: TestError("full")) { try await storage.clear() }
  }

  @Test("value(forKey:) and setValue(_:forKey:) are the entry API without dates")
  func conveniences() async throws {
    let store = SpyKeyValueStore<Int, String>()
    #expect(try await store.value(forKey: 1) == nil)
    try await store.setValue("one", forKey: 1)
    #expect(try await store.value(forKey: 1) == "one")
    #expect(store.entries[1]?.expiresAt == nil)
    try await store.removeValue(forKey: 1)
    #expect(try await store.value(forKey: 1) == nil)
  }
}

@Suite("CacheEntry")
struct CacheEntryTests {
  let stored = Date(timeIntervalSinceReferenceDate: 1_000)

  @Test("an entry is valid up to and including its expiry instant")
  func expiryBoundary() {
    let expiry = stored.addingTimeInterval(60)
    let entry = CacheEntry(value: 1, storedAt: stored, expiresAt: expiry)
    let justBefore = Date(timeIntervalSinceReferenceDate: expiry.timeIntervalSinceReferenceDate.nextDown)
    let justAfter = Date(timeIntervalSinceReferenceDate: expiry.timeIntervalSinceReferenceDate.nextUp)
    #expect(!entry.isExpired(at: justBefore))
    #expect(!entry.isExpired(at: expiry))
    #expect(entry.isExpired(at: justAfter))
  }

  @Test("an entry without expiry never expires")
  func noExpiry() {
    #expect(!CacheEntry(value: 1, storedAt: stored).isExpired(at: .distantFuture))
  }

  @Test("map keeps the dates, and entries compare and encode by value")
  func mapAndConformances() throws {
    let entry = CacheEntry(value: 2, storedAt: stored, expiresAt: stored.addingTimeInterval(1))
    let mapped = entry.map { String($0 * 2) }
    #expect(mapped == CacheEntry(value: "4", storedAt: stored, expiresAt: stored.addingTimeInterval(1)))
    #expect(Set([entry, entry]).count == 1)

    let data = try JSONEncoder().encode(entry)
    #expect(try JSONDecoder().decode(CacheEntry<Int>.self, from: data) == entry)
  }

  @Test("map passes a typed error through")
  func mapThrows() {
    let entry = CacheEntry(value: 2, storedAt: stored)
    #expect(throws: TestError("bad")) {
      try entry.map { (_: Int) throws(TestError) -> Int in throw TestError("bad") }
    }
  }
}
