import Foundation
import KilnRepository
import KilnTesting
import Testing

/// The release delay of a param, observed through `Repository.count` only, while
/// subscriptions skip the coordinator's actor (a valid memory cache already shown).
@Suite(.timeLimit(.minutes(1)))
struct ReleaseTimingTests {
  let clock = ManualClock()

  @Test("a subscription that skips validation holds the param through a due release; the delay runs again from its end")
  func dueReleaseWhileObservedWithoutValidation() async {
    let repository = Repository<String, Int>(clock: clock, releaseAfter: .seconds(10))
    let flowable = AnyStoreFlowable.from(cacher: repository, fetcher: CountingFetcher { _ in 1 }, param: "a")
    // Fetches, then validates the cache (which settles it once the write has ended).
    for expected in [[.loading(content: nil), completed(1)], [completed(1)], [completed(1)]] as [[LoadingState<Int>]] {
      let subscriber = Subscriber(flowable.publish())
      #expect(await subscriber.wait(for: expected.count) == expected)
      await subscriber.cancel()
    }
    await clock.waitForSleepers(count: 1)
    // The cache is settled: the next subscription skips the actor and leaves the release,
    // due at 10 s, where it is.
    let observer = Subscriber(flowable.publish())
    #expect(await observer.wait(for: 1) == [completed(1)])
    clock.advance(by: .seconds(10))
    // The release task finds the param observed and ends: nothing sleeps any more.
    #expect(await poll(timeout: .seconds(30)) { clock.sleeperCount == 0 })
    #expect(repository.count == 1)
    await observer.cancel()
    // A new release task, due 10 s after the end (at 20 s).
    await clock.waitForSleepers(count: 1)
    clock.advance(by: .seconds(9))
    await clock.waitForSleepers(count: 1)
    #expect(repository.count == 1)
    clock.advance(by: .seconds(1))
    for _ in 0..<10_000 where repository.count > 0 { await Task.yield() }
    #expect(repository.count == 0)
  }
}
