import Foundation
import KilnRepository
import KilnTesting
import Observation
import Testing

@MainActor
@Suite(.timeLimit(.minutes(1)))
struct LoaderTests {
  /// Whether reading `read` and then running `change` notifies an observer.
  func notifies(_ read: @escaping @MainActor () -> Void, when change: () async -> Void) async -> Bool {
    let changed = AsyncCounter()
    withObservationTracking {
      read()
    } onChange: {
      changed.increment()
    }
    await change()
    return changed.value > 0
  }

  @Test("load publishes the object, observable with withObservationTracking")
  func loadPublishes() async {
    let loader = Loader<Int, String> { "object \($0)" }
    let completedKeys = Recorder<Int>()
    loader.loadCompleted = { key, _ in completedKeys.append(key) }
    #expect(await notifies({ _ = loader.object }, when: { await loader.load(key: 1) }))
    #expect(loader.object == "object 1")
    #expect(loader.error == nil)
    #expect(!loader.isLoading)
    #expect(loader.key == 1)
    #expect(completedKeys.values == [1])
  }

  @Test("isLoading is observable while a load runs")
  func isLoadingObservable() async {
    let gate = Gate()
    let loader = Loader<Int, Int> { key in
      try await gate.wait()
      return key
    }
    let changed = AsyncCounter()
    withObservationTracking {
      _ = loader.isLoading
    } onChange: {
      changed.increment()
    }
    let load = Task { await loader.load(key: 1) }
    await gate.waitForWaiters(1)
    #expect(loader.isLoading)
    #expect(changed.value == 1)
    gate.open()
    await load.value
    #expect(!loader.isLoading)
    #expect(loader.object == 1)
  }

  @Test("concurrent loads of one key share one request")
  func deduplicated() async {
    let gate = Gate()
    let calls = AsyncCounter()
    let loader = Loader<Int, Int> { key in
      calls.increment()
      try await gate.wait()
      return key * 2
    }
    let loads = (0..<10).map { _ in Task { await loader.load(key: 3) } }
    await gate.waitForWaiters(1)
    for _ in 0..<10 { await Task.yield() }
    gate.open()
    for load in loads { await load.value }
    #expect(calls.value == 1)
    #expect(loader.requestCount == 1)
    #expect(loader.object == 6)
  }

  @Test("a failure is published, keeps the object, and never blocks a refresh")
  func failureThenRefresh() async {
    let failing = AsyncCounter(1)
    let loader = Loader<Int, Int> { key in
      if failing.value > 0 { throw TestError("down") }
      return key
    }
    failing.add(-1)
    await loader.load(key: 1)
    #expect(loader.object == 1)
    failing.add(1)
    await loader.refresh(key: 2)
    #expect(loader.error as? TestError == TestError("down"))
    #expect(loader.object == 1)
    failing.add(-1)
    await loader.refresh(key: 2)
    #expect(loader.error == nil)
    #expect(loader.object == 2)
  }

  @Test("the newest request wins over an older one answered later")
  func newestWins() async {
    let slow = Gate()
    let loader = Loader<Int, Int> { key in
      if key == 1 { try await slow.wait() }
      return key
    }
    let old = Task { await loader.load(key: 1) }
    await slow.waitForWaiters(1)
    await loader.load(key: 2)
    slow.open()
    await old.value
    #expect(loader.object == 2)
  }

  @Test("cancel stops loading and keeps the object")
  func cancel() async {
    let gate = Gate()
    let loader = Loader<Int, Int> { key in
      try await gate.wait()
      return key
    }
    let load = Task { await loader.load(key: 1) }
    await gate.waitForWaiters(1)
    loader.cancel()
    await load.value
    #expect(!loader.isLoading)
    #expect(loader.object == nil)
    #expect(loader.error == nil)
  }

  @Test("CachedLoader answers from a fresh entry, reloads a stale one, and refresh drops the entry")
  func cachedLoader() async throws {
    let date = ManualDate()
    let calls = AsyncCounter()
    let cache = MemoryCache<Int, Int>(entryLifetime: nil, now: date.provider)
    let loader = CachedLoader<Int, Int>(cache: cache, lifetime: .seconds(60), now: date.provider) { key in
      calls.increment()
      return key + calls.value
    }
    await loader.load(key: 10)
    #expect(loader.object == 11)
    await loader.load(key: 10)
    #expect(loader.object == 11)
    #expect(calls.value == 1)
    date.advance(by: .seconds(61))
    await loader.load(key: 10)
    #expect(loader.object == 12)
    await loader.refresh(key: 10)
    #expect(loader.object == 13)
    #expect(calls.value == 3)
    #expect(cache[10] == 13)
  }

  @Test("GenericKey loads a single object")
  func genericKey() async {
    let loader = Loader<GenericKey, String> { _ in "settings" }
    await loader.load(key: GenericKey())
    #expect(loader.object == "settings")
  }
}
