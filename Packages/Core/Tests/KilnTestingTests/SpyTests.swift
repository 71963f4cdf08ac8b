import Foundation
import KilnCore
import KilnTesting
import Testing

@Suite("SpyQuery", .timeLimit(.minutes(1)))
struct SpyQueryTests {
  @Test("counts loads and returns scripted results in order, then repeats the last")
  func script() async {
    let spy = SpyQuery<Int, TestError>(results: [.failure("first"), .success(2), .success(3)])
    #expect(await spy.result() == .failure("first"))
    #expect(await spy.result() == .success(2))
    #expect(await spy.result() == .success(3))
    #expect(await spy.result() == .success(3))
    #expect(spy.loadCount == 4)
    #expect(spy.completedCount == 4)
    #expect(spy.inFlightCount == 0)
  }

  @Test("a closure script sees the call number")
  func closureScript() async {
    let spy = SpyQuery<Int, Never> { .success($0 * 10) }
    #expect(await spy.load() == 10)
    #expect(await spy.load() == 20)
  }

  @Test("hold parks loads in flight until release")
  func hold() async throws {
    let spy = SpyQuery<Int, any Error>(.success(1))
    spy.hold()
    let loads = (0..<3).map { _ in Task { try await spy.load() } }
    await spy.waitForLoads(3)
    #expect(spy.inFlightCount == 3)
    #expect(spy.completedCount == 0)
    spy.release()
    for load in loads { #expect(try await load.value == 1) }
    await spy.waitForCompletions(3)
    #expect(spy.inFlightCount == 0)
    // Released: later loads run straight through.
    #expect(try await spy.load() == 1)
  }

  @Test("a parked load whose task is cancelled throws CancellationError for any Error")
  func cancellationThrows() async {
    let spy = SpyQuery<Int, any Error>(.success(1))
    spy.hold()
    let load = Task { try await spy.load() }
    await spy.waitForLoads(1)
    load.cancel()
    await #expect(throws: CancellationError.self) { try await load.value }
    #expect(spy.cancelledCount == 1)
    #expect(spy.inFlightCount == 0)
  }

  @Test("a parked load with a typed failure returns its result when cancelled")
  func cancellationTyped() async {
    let spy = SpyQuery<Int, TestError>(.failure("scripted"))
    spy.hold()
    let load = Task { await spy.result() }
    await spy.waitForLoads(1)
    load.cancel()
    #expect(await load.value == .failure("scripted"))
    #expect(spy.cancelledCount == 1)
  }
}

@Suite("SpyStorage", .timeLimit(.minutes(1)))
struct SpyStorageTests {
  @Test("counts loads, saves, clears and timestamp reads")
  func counts() async throws {
    let now = ManualDate()
    let storage = SpyStorage<Int>(now: now.provider)
    await #expect(throws: StorageError.empty) { try await storage.load() }
    #expect(storage.timestamp == nil)
    try await storage.save(4)
    #expect(try await storage.load() == 4)
    #expect(storage.timestamp == now())
    try await storage.clear()
    #expect(storage.value == nil)
    #expect(storage.loadCount == 2)
    #expect(storage.saveCount == 1)
    #expect(storage.savedValues == [4])
    #expect(storage.clearCount == 1)
    #expect(storage.timestampReadCount == 2)
  }

  @Test("starts with a value stamped now unless told otherwise")
  func initialValue() {
    let now = ManualDate()
    #expect(SpyStorage(value: 1, now: now.provider).timestamp == now())
    #expect(SpyStorage(value: 1, timestamp: .distantPast, now: now.provider).timestamp == .distantPast)
  }

  @Test("injected failures: a failed save stores nothing")
  func failures() async throws {
    let storage = SpyStorage<Int>(value: 1)
    storage.failSaves(with: TestError("full"))
    await #expect(throws: TestError("full")) { try await storage.save(2) }
    #expect(storage.value == 1)
    #expect(storage.savedValues == [2])
    storage.failLoads(with: TestError("io"))
    await #expect(throws: TestError("io")) { try await storage.load() }
    storage.failLoads(with: nil)
    storage.failSaves(with: nil)
    try await storage.save(3)
    #expect(try await storage.load() == 3)
  }
}

@Suite("SpyKeyValueStore", .timeLimit(.minutes(1)))
struct SpyKeyValueStoreTests {
  @Test("stores entries with dates and counts every operation")
  func basics() async throws {
    let now = ManualDate()
    let store = SpyKeyValueStore<String, Int>(now: now.provider)
    let expiry = now().addingTimeInterval(30)
    try await store.setValue(1, forKey: "a", expiresAt: expiry)
    #expect(try await store.entry(forKey: "a") == CacheEntry(value: 1, storedAt: now(), expiresAt: expiry))
    try await store.setValue(2, forKey: "b")
    try await store.removeValue(forKey: "a")
    #expect(try await store.entry(forKey: "a") == nil)
    try await store.removeAll()
    #expect(store.entries.isEmpty)
    #expect(store.writeCount == 2)
    #expect(store.readCount == 2)
    #expect(store.removalCount == 1)
    #expect(store.removeAllCount == 1)
  }

  @Test("expired entries are not returned, at the exact boundary too")
  func expiry() async throws {
    let now = ManualDate()
    let store = SpyKeyValueStore<String, Int>(defaultLifetime: .seconds(5), now: now.provider)
    try await store.setValue(1, forKey: "a")
    now.advance(by: .seconds(5))
    #expect(try await store.value(forKey: "a") == 1)
    now.advance(by: .nanoseconds(1_000))
    #expect(try await store.value(forKey: "a") == nil)
    #expect(store.entries["a"] == nil)
  }

  @Test("injected read and write failures")
  func failures() async {
    let store = SpyKeyValueStore<String, Int>()
    store.failWrites(with: TestError("ro"))
    await #expect(throws: TestError("ro")) { try await store.setValue(1, forKey: "a") }
    await #expect(throws: TestError("ro")) { try await store.removeValue(forKey: "a") }
    await #expect(throws: TestError("ro")) { try await store.removeAll() }
    store.failReads(with: TestError("io"))
    await #expect(throws: TestError("io")) { try await store.entry(forKey: "a") }
  }
}
