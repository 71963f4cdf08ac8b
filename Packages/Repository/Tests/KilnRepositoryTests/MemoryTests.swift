import Foundation
import KilnRepository
import KilnTesting
import Testing

/// Bounded memory: unobserved params are released, abandoned fetches cancelled, and
/// invalidation marks params stale.
@Suite(.timeLimit(.minutes(1)))
struct MemoryTests {
  let clock = ManualClock()

  @Test("the state of a param nobody observes is released after the delay on the clock")
  func releaseAfterDelay() async {
    let flows = FlowRegistry<String, Int>(releaseAfter: .seconds(10), clock: clock)
    let cacher = StoreCacher(flows: flows)
    let flowable = AnyStoreFlowable.from(cacher: cacher, fetcher: CountingFetcher { _ in 1 }, param: "a")
    let subscriber = Subscriber(flowable.publish())
    _ = await subscriber.wait(for: 2)
    #expect(flows.count == 1)
    await subscriber.cancel()
    await clock.waitForSleepers(count: 1)
    clock.advance(by: .seconds(9))
    #expect(flows.count == 1)
    // The release is scheduled from a task of its own: step the clock until it runs.
    for _ in 0..<1_000 where flows.count > 0 {
      clock.advance(by: .seconds(1))
      await Task.yield()
    }
    #expect(flows.count == 0)
    // The data is still cached: a new subscriber gets it without fetching.
    let again = Subscriber(flowable.publish())
    #expect(await again.wait(for: 1) == [completed(1)])
    await again.cancel()
  }

  @Test("the release delay runs from when the last subscription ended, not from when the param first became idle")
  func releaseDelayRestartsWhenLeft() async {
    let flows = FlowRegistry<String, Int>(releaseAfter: .seconds(10), clock: clock)
    let cacher = StoreCacher(flows: flows)
    let flowable = AnyStoreFlowable.from(cacher: cacher, fetcher: CountingFetcher { _ in 1 }, param: "a")
    let first = Subscriber(flowable.publish())
    _ = await first.wait(for: 2)
    await first.cancel()
    await clock.waitForSleepers(count: 1)
    clock.advance(by: .seconds(6))
    // The same flowable again, on a valid cache: a subscription that needs no validation.
    let second = Subscriber(flowable.publish())
    #expect(await second.wait(for: 1) == [completed(1)])
    await second.cancel()
    // Due 10 s after the second subscription ended: at 16 s, not 10 s.
    clock.advance(by: .seconds(4))
    await clock.waitForSleepers(count: 1)
    #expect(flows.count == 1)
    clock.advance(by: .seconds(5))
    await clock.waitForSleepers(count: 1)
    #expect(flows.count == 1)
    clock.advance(by: .seconds(1))
    for _ in 0..<10_000 where flows.count > 0 { await Task.yield() }
    #expect(flows.count == 0)
  }

  @Test("a param used again before the delay is kept")
  func reuseKeeps() async {
    let flows = FlowRegistry<String, Int>(releaseAfter: .seconds(10), clock: clock)
    let cacher = StoreCacher(flows: flows)
    let flowable = AnyStoreFlowable.from(cacher: cacher, fetcher: CountingFetcher { _ in 1 }, param: "a")
    _ = await flowable.getData()
    await clock.waitForSleepers(count: 1)
    let subscriber = Subscriber(flowable.publish())
    _ = await subscriber.wait(for: 1)
    clock.advance(by: .seconds(10))
    await clock.waitForSleepers(count: 0)
    #expect(flows.count == 1)
    await subscriber.cancel()
  }

  @Test("the last subscriber leaving cancels the fetch; the content stays")
  func abandonedFetchCancelled() async throws {
    let flows = FlowRegistry<String, Int>(releaseAfter: .seconds(10), clock: clock)
    let cacher = StoreCacher(flows: flows)
    let fetcher = ControlledFetcher<Int>()
    let flowable = AnyStoreFlowable.from(cacher: cacher, fetcher: fetcher, param: "a")
    let subscribers = (0..<3).map { _ in Subscriber(flowable.publish()) }
    await fetcher.calls.wait(untilAtLeast: 1)
    await subscribers[0].cancel()
    await subscribers[1].cancel()
    #expect(fetcher.ended.value == 0)
    await subscribers[2].cancel()
    await fetcher.ended.wait(untilAtLeast: 1)
    for _ in 0..<1_000 where flows.count > 0 {
      clock.advance(by: .seconds(1))
      await Task.yield()
    }
    #expect(flows.count == 0)
    #expect(try await cacher.loadData(param: "a") == nil)
  }

  @Test("with .finish, an abandoned fetch finishes and fills the cache")
  func abandonedFetchFinishes() async throws {
    let flows = FlowRegistry<String, Int>(abandonedFetch: .finish, clock: clock)
    let cacher = StoreCacher(flows: flows)
    let fetcher = ControlledFetcher<Int>()
    let flowable = AnyStoreFlowable.from(cacher: cacher, fetcher: fetcher, param: "a")
    let subscriber = Subscriber(flowable.publish())
    await fetcher.calls.wait(untilAtLeast: 1)
    await subscriber.cancel()
    fetcher.succeed(0, 7)
    await fetcher.ended.wait(untilAtLeast: 1)
    #expect(await flowable.getData(from: .cache) == 7)
  }

  @Test("a cancelled requireData cancels the fetch it alone waited for")
  func cancelledWaiter() async {
    let cacher = StoreCacher<String, Int>(flows: FlowRegistry(clock: clock))
    let fetcher = ControlledFetcher<Int>()
    let flowable = AnyStoreFlowable.from(cacher: cacher, fetcher: fetcher, param: "a")
    let waiter = Task { try await flowable.requireData() }
    await fetcher.calls.wait(untilAtLeast: 1)
    waiter.cancel()
    await fetcher.ended.wait(untilAtLeast: 1)
    await #expect(throws: CancellationError.self) { try await waiter.value }
  }

  @Test("invalidation by prefix: observed params refetch now, others on next use, others untouched")
  func invalidateByPrefix() async {
    let flows = FlowRegistry<String, Int>(clock: clock)
    let cacher = StoreCacher(flows: flows)
    let fetcher = CountingFetcher<Int> { param in param.count }
    func flowable(_ param: String) -> AnyStoreFlowable<Int> {
      AnyStoreFlowable.from(cacher: cacher, fetcher: fetcher, param: param)
    }
    try? await cacher.store.setValue(100, forKey: "user/cold", expiresAt: nil)
    let observed = Subscriber(flowable("user/1").publish())
    _ = await observed.wait(for: 2)
    _ = await flowable("user/22").getData()
    _ = await flowable("post/1").getData()
    #expect(fetcher.calls.value == 3)
    await flows.invalidate(prefix: "user/")
    #expect(await observed.wait(for: 4) == [.loading(content: nil), completed(6), .loading(content: 6), completed(6)])
    #expect(fetcher.calls.value == 4)
    #expect(await flowable("post/1").getData() == 6)
    #expect(fetcher.calls.value == 4)
    #expect(await flowable("user/22").getData() == 7)
    #expect(fetcher.calls.value == 5)
    #expect(await flowable("user/cold").getData() == 9)
    #expect(fetcher.calls.value == 6)
    await observed.cancel()
  }
}
