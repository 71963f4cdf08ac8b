import Foundation
import KilnRepository
import KilnRepositoryTesting
import KilnTesting
import Testing

/// Bounded memory: unobserved params are released, abandoned fetches cancelled, and
/// invalidation marks params stale.
@Suite(.timeLimit(.minutes(1)))
struct MemoryTests {
  let clock = ManualClock()

  @Test("the state of a param nobody observes is released after the delay on the clock")
  func releaseAfterDelay() async {
    let repository = Repository<String, Int>(clock: clock, releaseAfter: .seconds(10))
    let flowable = AnyStoreFlowable.from(cacher: repository, fetcher: CountingFetcher { _ in 1 }, param: "a")
    let subscriber = LoadingStateRecorder(flowable.publish())
    _ = await subscriber.waitForCount(2)
    #expect(repository.count == 1)
    await subscriber.stop()
    await clock.waitForSleepers(count: 1)
    clock.advance(by: .seconds(9))
    #expect(repository.count == 1)
    // The release is scheduled from a task of its own: step the clock until it runs.
    for _ in 0..<1_000 where repository.count > 0 {
      clock.advance(by: .seconds(1))
      await Task.yield()
    }
    #expect(repository.count == 0)
    // The data is still cached: a new subscriber gets it without fetching.
    let again = LoadingStateRecorder(flowable.publish())
    #expect(await again.waitForCount(1) == [completed(1)])
    await again.stop()
  }

  @Test("the release delay runs from when the last subscription ended, not from when the param first became idle")
  func releaseDelayRestartsWhenLeft() async {
    let repository = Repository<String, Int>(clock: clock, releaseAfter: .seconds(10))
    let flowable = AnyStoreFlowable.from(cacher: repository, fetcher: CountingFetcher { _ in 1 }, param: "a")
    let first = LoadingStateRecorder(flowable.publish())
    _ = await first.waitForCount(2)
    await first.stop()
    await clock.waitForSleepers(count: 1)
    clock.advance(by: .seconds(6))
    // The same flowable again, on a valid cache: a subscription that needs no validation.
    let second = LoadingStateRecorder(flowable.publish())
    #expect(await second.waitForCount(1) == [completed(1)])
    await second.stop()
    // Due 10 s after the second subscription ended: at 16 s, not 10 s.
    clock.advance(by: .seconds(4))
    await clock.waitForSleepers(count: 1)
    #expect(repository.count == 1)
    clock.advance(by: .seconds(5))
    await clock.waitForSleepers(count: 1)
    #expect(repository.count == 1)
    clock.advance(by: .seconds(1))
    for _ in 0..<10_000 where repository.count > 0 { await Task.yield() }
    #expect(repository.count == 0)
  }

  @Test("a param used again before the delay is kept")
  func reuseKeeps() async {
    let repository = Repository<String, Int>(clock: clock, releaseAfter: .seconds(10))
    let flowable = AnyStoreFlowable.from(cacher: repository, fetcher: CountingFetcher { _ in 1 }, param: "a")
    _ = await flowable.getData()
    await clock.waitForSleepers(count: 1)
    let subscriber = LoadingStateRecorder(flowable.publish())
    _ = await subscriber.waitForCount(1)
    clock.advance(by: .seconds(10))
    await clock.waitForSleepers(count: 0)
    #expect(repository.count == 1)
    await subscriber.stop()
  }

  @Test("the last subscriber leaving cancels the fetch; the content stays")
  func abandonedFetchCancelled() async throws {
    let repository = Repository<String, Int>(clock: clock, releaseAfter: .seconds(10))
    let fetcher = ControlledFetcher<String, Int>()
    let flowable = AnyStoreFlowable.from(cacher: repository, fetcher: fetcher, param: "a")
    let subscribers = (0..<3).map { _ in LoadingStateRecorder(flowable.publish()) }
    await fetcher.waitForCall(0)
    await subscribers[0].stop()
    await subscribers[1].stop()
    #expect(fetcher.endedCount == 0)
    await subscribers[2].stop()
    await fetcher.waitForEndedCalls(1)
    #expect(fetcher.cancelledCount == 1)
    for _ in 0..<1_000 where repository.count > 0 {
      clock.advance(by: .seconds(1))
      await Task.yield()
    }
    #expect(repository.count == 0)
    #expect(try await repository.loadData(param: "a") == nil)
  }

  @Test("with .finish, an abandoned fetch finishes and fills the cache")
  func abandonedFetchFinishes() async throws {
    let repository = Repository<String, Int>(clock: clock, abandonedFetch: .finish)
    let fetcher = ControlledFetcher<String, Int>()
    let flowable = AnyStoreFlowable.from(cacher: repository, fetcher: fetcher, param: "a")
    let subscriber = LoadingStateRecorder(flowable.publish())
    await fetcher.waitForCall(0)
    await subscriber.stop()
    fetcher.succeed(0, with: 7)
    await fetcher.waitForEndedCalls(1)
    #expect(await flowable.getData(from: .cache) == 7)
  }

  @Test("a cancelled requireData cancels the fetch it alone waited for")
  func cancelledWaiter() async {
    let repository = Repository<String, Int>(clock: clock)
    let fetcher = ControlledFetcher<String, Int>()
    let flowable = AnyStoreFlowable.from(cacher: repository, fetcher: fetcher, param: "a")
    let waiter = Task { try await flowable.requireData() }
    await fetcher.waitForCall(0)
    waiter.cancel()
    await fetcher.waitForEndedCalls(1)
    #expect(fetcher.cancelledCount == 1)
    await #expect(throws: CancellationError.self) { try await waiter.value }
  }

  @Test("invalidation by prefix: observed params refetch now, others on next use, others untouched")
  func invalidateByPrefix() async {
    let repository = Repository<String, Int>(clock: clock)
    let fetcher = CountingFetcher<Int> { param in param.count }
    func flowable(_ param: String) -> AnyStoreFlowable<Int> {
      AnyStoreFlowable.from(cacher: repository, fetcher: fetcher, param: param)
    }
    try? await repository.saveData(100, param: "user/cold")
    let observed = LoadingStateRecorder(flowable("user/1").publish())
    _ = await observed.waitForCount(2)
    _ = await flowable("user/22").getData()
    _ = await flowable("post/1").getData()
    #expect(fetcher.calls.value == 3)
    await repository.invalidate(prefix: "user/")
    #expect(
      await observed.waitForCount(4) == [.loading(content: nil), completed(6), .loading(content: 6), completed(6)])
    #expect(fetcher.calls.value == 4)
    #expect(await flowable("post/1").getData() == 6)
    #expect(fetcher.calls.value == 4)
    #expect(await flowable("user/22").getData() == 7)
    #expect(fetcher.calls.value == 5)
    #expect(await flowable("user/cold").getData() == 9)
    #expect(fetcher.calls.value == 6)
    await observed.stop()
  }
}
