import Foundation
import KilnRepository
import KilnRepositoryTesting
import KilnTesting
import Testing

/// The exact states `publish()` emits for each cache state and fetch outcome.
@Suite(.timeLimit(.minutes(1)))
struct StoreFlowableTests {
  let clock = ManualClock()
  let memory: MemoryCache<String, Int>
  let repository: Repository<String, Int>
  let fetcher = ControlledFetcher<String, Int>()

  init() {
    memory = MemoryCache(entryLifetime: nil, now: clock.dateProvider)
    repository = Repository(store: memory, expiration: .seconds(60), clock: clock)
  }

  var flowable: AnyStoreFlowable<Int> {
    AnyStoreFlowable.from(cacher: repository, fetcher: fetcher, param: "a")
  }

  @Test("no cache: loading(nil), then completed with the fetched value, after one fetch")
  func noCache() async {
    let subscriber = LoadingStateRecorder(flowable.publish())
    await fetcher.waitForCall(0)
    fetcher.succeed(0, with: 7)
    #expect(await subscriber.waitForCount(2) == [.loading(content: nil), completed(7)])
    #expect(await flowable.getData(from: .cache) == 7)
    #expect(memory["a"] == 7)
    await flowable.update(8)
    #expect(await subscriber.waitForCount(3) == [.loading(content: nil), completed(7), completed(8)])
    #expect(fetcher.callCount == 1)
    #expect(subscriber.snapshots.map(\.origin) == [nil, .fetcher, .update])
    await subscriber.stop()
  }

  @Test("a valid cache: completed with it, and no fetch")
  func validCache() async {
    memory.setValue(5, forKey: "a", expiresAt: nil)
    let subscriber = LoadingStateRecorder(flowable.publish())
    #expect(await subscriber.waitForCount(1) == [completed(5)])
    #expect(subscriber.snapshots.first?.origin == .cache)
    await flowable.update(6)
    #expect(await subscriber.waitForCount(2) == [completed(5), completed(6)])
    #expect(fetcher.callCount == 0)
    await subscriber.stop()
  }

  @Test("an expired cache stays visible: loading(stale), then completed(fresh)")
  func expiredCache() async {
    memory.setValue(5, forKey: "a", expiresAt: nil)
    clock.advance(by: .seconds(61))
    let subscriber = LoadingStateRecorder(flowable.publish())
    await fetcher.waitForCall(0)
    #expect(await subscriber.waitForCount(1) == [.loading(content: 5)])
    fetcher.succeed(0, with: 9)
    #expect(await subscriber.waitForCount(2) == [.loading(content: 5), completed(9)])
    #expect(fetcher.callCount == 1)
    await subscriber.stop()
  }

  @Test("a store with an entry lifetime of its own keeps the content past it: stale, shown while refreshing")
  func storeLifetimeLosesNothing() async throws {
    // A MemoryCache with its default one-hour lifetime, as a new user writes it.
    let hourly = MemoryCache<String, Int>(now: clock.dateProvider)
    #expect(hourly.entryLifetime == .seconds(3600))
    let repository = Repository(store: hourly, expiration: .seconds(60), clock: clock)
    try await repository.saveData(5, param: "a")
    clock.advance(by: .seconds(3 * 3600))
    #expect(hourly["a"] == 5, "the store dropped the content after its own lifetime")
    #expect(try await repository.loadCachedData(param: "a")?.data == 5)
    let flowable = AnyStoreFlowable.from(cacher: repository, fetcher: fetcher, param: "a")
    let subscriber = LoadingStateRecorder(flowable.publish())
    await fetcher.waitForCall(0)
    #expect(await subscriber.waitForCount(1) == [.loading(content: 5)])
    fetcher.succeed(0, with: 9)
    #expect(await subscriber.waitForCount(2) == [.loading(content: 5), completed(9)])
    await subscriber.stop()
  }

  @Test("no cache and a failing fetch: loading(nil), error; the sequence stays open and validate() recovers")
  func failureThenValidate() async {
    let subscriber = LoadingStateRecorder(flowable.publish())
    await fetcher.waitForCall(0)
    fetcher.fail(0, with: TestError("down"))
    #expect(await subscriber.waitForCount(2) == [.loading(content: nil), .error(TestError("down"), content: nil)])
    fetcher.succeed(1, with: 3)
    await flowable.validate()
    #expect(
      await subscriber.waitForCount(4) == [
        .loading(content: nil), .error(TestError("down"), content: nil), .loading(content: nil), completed(3),
      ])
    #expect(fetcher.callCount == 2)
    await subscriber.stop()
  }

  @Test("every new subscriber checks the cache again: a rewritten, expired or invalidated entry shows")
  func cacheCheckedForEveryLoadingStateRecorder() async {
    // One flowable for every subscription, as an app keeps one: the later subscriptions find
    // the state already shown valid.
    let flowable = self.flowable
    memory.setValue(5, forKey: "a", expiresAt: nil)
    for _ in 0..<3 {
      let subscriber = LoadingStateRecorder(flowable.publish())
      #expect(await subscriber.waitForCount(1) == [completed(5)])
      await subscriber.stop()
    }
    #expect(fetcher.callCount == 0)
    // Written straight to the store.
    clock.advance(by: .seconds(1))
    memory.setValue(6, forKey: "a", expiresAt: nil)
    let rewritten = LoadingStateRecorder(flowable.publish())
    #expect(await rewritten.waitForCount(2) == [completed(5), completed(6)])
    await rewritten.stop()
    // Expired.
    clock.advance(by: .seconds(61))
    let expired = LoadingStateRecorder(flowable.publish())
    await fetcher.waitForCall(0)
    fetcher.succeed(0, with: 7)
    #expect(await expired.waitForCount(3) == [completed(6), .loading(content: 6), completed(7)])
    await expired.stop()
    for _ in 0..<2 {
      let subscriber = LoadingStateRecorder(flowable.publish())
      #expect(await subscriber.waitForCount(1) == [completed(7)])
      await subscriber.stop()
    }
    #expect(fetcher.callCount == 1)
    // Invalidated.
    await repository.invalidateAll()
    let invalidated = LoadingStateRecorder(flowable.publish())
    await fetcher.waitForCall(1)
    fetcher.succeed(1, with: 8)
    #expect(await invalidated.waitForCount(3) == [completed(7), .loading(content: 7), completed(8)])
    await invalidated.stop()
    #expect(fetcher.callCount == 2)
  }

  @Test("an invalidation refetches with the fetcher of the latest subscription, even one that found the cache valid")
  func invalidationUsesTheLatestFetcher() async {
    let first = flowable
    let other = ControlledFetcher<String, Int>()
    let second = AnyStoreFlowable.from(cacher: repository, fetcher: other, param: "a")
    memory.setValue(5, forKey: "a", expiresAt: nil)
    let early = LoadingStateRecorder(first.publish())
    #expect(await early.waitForCount(1) == [completed(5)])
    await early.stop()
    let late = LoadingStateRecorder(second.publish())
    #expect(await late.waitForCount(1) == [completed(5)])
    await repository.invalidateAll()
    await other.waitForCall(0)
    other.succeed(0, with: 9)
    #expect(await late.waitForCount(3) == [completed(5), .loading(content: 5), completed(9)])
    #expect(fetcher.callCount == 0)
    await late.stop()
  }

  @Test("a valid cache and a failing fetcher: completed(cached), no fetch")
  func validCacheFailingFetcher() async {
    memory.setValue(5, forKey: "a", expiresAt: nil)
    let failing = CountingFetcher<Int> { _ in throw TestError("down") }
    let flowable = AnyStoreFlowable.from(cacher: repository, fetcher: failing, param: "a")
    let subscriber = LoadingStateRecorder(flowable.publish())
    #expect(await subscriber.waitForCount(1) == [completed(5)])
    await flowable.validate()
    #expect(failing.calls.value == 0)
    await flowable.update(6)
    #expect(await subscriber.waitForCount(2) == [completed(5), completed(6)])
    await subscriber.stop()
  }

  @Test("refresh while observed: every subscriber sees completed(V), loading(V), completed(F)")
  func refreshWhileObserved() async {
    memory.setValue(1, forKey: "a", expiresAt: nil)
    let subscribers = (0..<3).map { _ in LoadingStateRecorder(flowable.publish()) }
    for subscriber in subscribers { _ = await subscriber.waitForCount(1) }
    fetcher.succeed(0, with: 2)
    await flowable.refresh()
    for subscriber in subscribers {
      #expect(await subscriber.waitForCount(3) == [completed(1), .loading(content: 1), completed(2)])
      await subscriber.stop()
    }
    #expect(memory["a"] == 2)
  }

  @Test("a failed refresh keeps the value in the cache and in the error state; update recovers")
  func failedRefreshKeepsValue() async {
    memory.setValue(1, forKey: "a", expiresAt: nil)
    let subscriber = LoadingStateRecorder(flowable.publish())
    _ = await subscriber.waitForCount(1)
    fetcher.fail(0, with: TestError("down"))
    await flowable.refresh()
    #expect(
      await subscriber.waitForCount(3) == [completed(1), .loading(content: 1), .error(TestError("down"), content: 1)])
    #expect(memory["a"] == 1)
    #expect(await flowable.getData(from: .cache) == 1)
    await flowable.update(4)
    #expect(await subscriber.waitForCount(4).last == completed(4))
    await subscriber.stop()
  }

  @Test("update(nil) and clear() empty the cache and show loading(nil)")
  func updateNilAndClear() async {
    memory.setValue(1, forKey: "a", expiresAt: nil)
    let subscriber = LoadingStateRecorder(flowable.publish())
    _ = await subscriber.waitForCount(1)
    await flowable.update(nil)
    #expect(await subscriber.waitForCount(2) == [completed(1), .loading(content: nil)])
    #expect(memory["a"] == nil)
    await flowable.update(2)
    await flowable.clear()
    #expect(
      await subscriber.waitForCount(4) == [completed(1), .loading(content: nil), completed(2), .loading(content: nil)])
    #expect(memory["a"] == nil)
    #expect(fetcher.callCount == 0)
    await subscriber.stop()
  }

  @Test("forceRefresh fetches even with a valid cache")
  func forceRefresh() async {
    memory.setValue(1, forKey: "a", expiresAt: nil)
    let subscriber = LoadingStateRecorder(flowable.publish(forceRefresh: true))
    await fetcher.waitForCall(0)
    fetcher.succeed(0, with: 2)
    #expect(await subscriber.waitForCount(2) == [.loading(content: 1), completed(2)])
    await subscriber.stop()
  }

  @Test("a fetch that started before update never overwrites it, whatever the answer order")
  func updateWinsOverOlderFetch() async {
    let subscriber = LoadingStateRecorder(flowable.publish())
    await fetcher.waitForCall(0)
    await flowable.update(10)
    fetcher.succeed(0, with: 1)
    await fetcher.waitForEndedCalls(1)
    await flowable.update(11)
    #expect(await subscriber.waitForCount(3) == [.loading(content: nil), completed(10), completed(11)])
    #expect(memory["a"] == 11)
    await subscriber.stop()
  }

  @Test("a fetch that started before clear never writes the cache")
  func clearWinsOverOlderFetch() async {
    let refresh = Task { [flowable] in await flowable.refresh() }
    await fetcher.waitForCall(0)
    await flowable.clear()
    fetcher.succeed(0, with: 1)
    await refresh.value
    #expect(memory["a"] == nil)
    #expect(await flowable.getData(from: .cache) == nil)
  }

  @Test("a newer refresh wins over an older one answered later", arguments: [true, false])
  func newerRefreshWins(olderAnswersLast: Bool) async {
    let subscriber = LoadingStateRecorder(flowable.publish())
    await fetcher.waitForCall(0)
    let second = Task { [flowable] in await flowable.refresh() }
    await fetcher.waitForCall(1)
    if olderAnswersLast {
      fetcher.succeed(1, with: 2)
      await second.value
      fetcher.succeed(0, with: 1)
      await fetcher.waitForEndedCalls(2)
    } else {
      fetcher.succeed(0, with: 1)
      await fetcher.waitForEndedCalls(1)
      fetcher.succeed(1, with: 2)
      await second.value
    }
    await flowable.update(3)
    let states = await subscriber.waitForCount(3)
    #expect(states == [.loading(content: nil), completed(2), completed(3)])
    await subscriber.stop()
  }

  @Test("equal consecutive states are not emitted")
  func noDuplicates() async {
    memory.setValue(1, forKey: "a", expiresAt: nil)
    let subscriber = LoadingStateRecorder(flowable.publish())
    _ = await subscriber.waitForCount(1)
    await flowable.update(1)
    await flowable.validate()
    let second = LoadingStateRecorder(flowable.publish())
    _ = await second.waitForCount(1)
    await flowable.update(2)
    #expect(await subscriber.waitForCount(2) == [completed(1), completed(2)])
    #expect(await second.waitForCount(2) == [completed(1), completed(2)])
    await subscriber.stop()
    await second.stop()
  }

  @Test("20 concurrent subscribers on an empty cache share one fetch, and leave nothing behind")
  func concurrentSubscribersShareOneFetch() async {
    let subscribers = (0..<20).map { _ in LoadingStateRecorder(flowable.publish()) }
    await fetcher.waitForCall(0)
    for subscriber in subscribers { await subscriber.waitForCount(1) }
    fetcher.succeed(0, with: 5)
    for subscriber in subscribers {
      #expect(await subscriber.waitForCount(2).last == completed(5))
    }
    #expect(fetcher.callCount == 1)
    for subscriber in subscribers { await subscriber.stop() }
    #expect(fetcher.callCount == 1)
  }

  @Test("the origin of a value is reported: cache, fetcher, update")
  func origins() async {
    memory.setValue(1, forKey: "a", expiresAt: nil)
    let subscriber = LoadingStateRecorder(flowable.publish())
    _ = await subscriber.waitForCount(1)
    fetcher.succeed(0, with: 2)
    await flowable.refresh()
    await flowable.update(3)
    _ = await subscriber.waitForCount(4)
    #expect(subscriber.snapshots.map(\.origin) == [.cache, .cache, .fetcher, .update])
    await subscriber.stop()
  }

  @Test("flowables made from one repository share the state of a param")
  func sharedAcrossFlowables() async {
    let first = flowable
    let second = AnyStoreFlowable.from(cacher: repository, fetcher: fetcher, param: "a")
    let subscriber = LoadingStateRecorder(first.publish())
    await fetcher.waitForCall(0)
    await second.update(4)
    #expect(await subscriber.waitForCount(2) == [.loading(content: nil), completed(4)])
    fetcher.succeed(0, with: 1)
    await fetcher.waitForEndedCalls(1)
    #expect(await first.getData(from: .cache) == 4)
    await subscriber.stop()
  }
}
