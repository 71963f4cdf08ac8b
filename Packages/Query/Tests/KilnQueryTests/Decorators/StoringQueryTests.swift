import Foundation
import KilnQuery
import KilnTesting
import Testing

@Suite("store(into:) and store(into:forKey:)", .timeLimit(.minutes(1)))
struct StoringQueryTests {
  @Test("saves successes and returns them unchanged")
  func savesSuccesses() async throws {
    let cache = SpyStorage<Int>()
    let query = SpyQuery<Int, any Error> { .success($0 * 10) }.store(into: cache)
    #expect(try await query.load() == 10)
    #expect(try await query.load() == 20)
    #expect(cache.savedValues == [10, 20])
    #expect(cache.value == 20)
  }

  @Test("the save completes before the load returns")
  func saveBeforeReturn() async throws {
    let cache = SpyStorage<Int>()
    _ = try await AnyQuery<Int, any Error> { 1 }.store(into: cache).load()
    #expect(try await cache.load() == 1)
  }

  @Test("never saves failures")
  func skipsFailures() async {
    let cache = SpyStorage<Int>()
    let typed = TypedQuery(outcome: .failure(.offline)).store(into: cache)
    #expect(await typed.result() == .failure(.offline))
    #expect(cache.saveCount == 0)
  }

  @Test("a failing save leaves the result unchanged and reaches the handler")
  func failingSave() async {
    let cache = SpyStorage<Int>()
    cache.failSaves(with: TestError("disk full"))
    let saveErrors = Recorder<TestError?>()
    let query = TypedQuery(outcome: .success(7)).store(into: cache) { error in
      saveErrors.append(error as? TestError)
    }

    #expect(await query.result() == .success(7))
    #expect(saveErrors.values == [TestError("disk full")])
    #expect(cache.saveCount == 1)
    #expect(cache.value == nil)
  }

  @Test("a failing save without a handler is ignored")
  func failingSaveWithoutHandler() async throws {
    let cache = SpyStorage<Int>()
    cache.failSaves(with: TestError("disk full"))
    #expect(try await AnyQuery<Int, any Error> { 4 }.store(into: cache).load() == 4)
  }

  @Test("store(into:forKey:) writes that key only, with the store's default lifetime")
  func storesUnderKey() async throws {
    let now = ManualDate()
    let store = SpyKeyValueStore<String, Int>(defaultLifetime: .seconds(30), now: now.provider)
    try await store.setValue(1, forKey: "other")
    let query = AnyQuery<Int, any Error> { 42 }.store(into: store, forKey: "answer")

    #expect(try await query.load() == 42)

    let entry = try #require(store.entries["answer"])
    #expect(entry.value == 42)
    #expect(entry.expiresAt == now.now.addingTimeInterval(30))
    #expect(store.entries["other"]?.value == 1)
  }

  @Test("store(into:forKey:) reports a failing write and keeps the result")
  func keyValueWriteFailure() async {
    let store = SpyKeyValueStore<String, Int>()
    store.failWrites(with: TestError("read-only"))
    let saveErrors = Recorder<String>()
    let query = TypedQuery(outcome: .success(3)).store(into: store, forKey: "k") { error in
      saveErrors.append("\(error)")
    }
    #expect(await query.result() == .success(3))
    #expect(saveErrors.values == ["TestError(read-only)"])
  }
}
