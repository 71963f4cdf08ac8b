import Foundation
import KilnRepository
import KilnRepositoryTesting
import KilnTesting
import Testing

/// The live states are the repository's; the cacher under it only stores data.
@Suite(.timeLimit(.minutes(1)))
struct RepositoryOwnershipTests {
  let clock = ManualClock()

  @Test("two repositories over one cacher share its data, not their states, fetches or invalidations")
  func statesBelongToTheRepository() async throws {
    let storage = StoreCacher<String, Int>(expiration: .seconds(60), clock: clock)
    let first = Repository(cacher: storage)
    let second = Repository(cacher: storage)
    let fetcher = ControlledFetcher<String, Int>()
    fetcher.succeed(0, with: 1)
    fetcher.succeed(1, with: 2)

    let one = AnyStoreFlowable.from(cacher: first, fetcher: fetcher, param: "a")
    let recorder = LoadingStateRecorder(one.publish())
    #expect(await recorder.waitForCount(2) == [.loading(content: nil), completed(1)])
    #expect(first.count == 1)
    #expect(second.count == 0)

    // The data is the cacher's: the second repository reads it without fetching.
    let two = AnyStoreFlowable.from(cacher: second, fetcher: fetcher, param: "a")
    #expect(try await two.requireData() == 1)
    #expect(fetcher.callCount == 1)

    // An invalidation is the repository's: the first refetches, the second still trusts it.
    clock.advance(by: .seconds(1))
    await first.invalidateAll()
    #expect(
      await recorder.waitForCount(4) == [.loading(content: nil), completed(1), .loading(content: 1), completed(2)])
    #expect(await first.needsRefresh(cachedAt: clock.dateProvider().addingTimeInterval(-1), param: "a"))
    #expect(await !second.needsRefresh(cachedAt: clock.dateProvider().addingTimeInterval(-1), param: "a"))
    #expect(fetcher.callCount == 2)
    await recorder.stop()
  }

  @Test("a repository is a cacher: its reads and writes reach the cacher under it, and change no state")
  func forwardsToItsCacher() async throws {
    let users = Repository<String, Int>(expiration: .seconds(60), clock: clock)
    #expect(users.expiration == .seconds(60))
    try await users.saveCachedData(5, cachedAt: nil, param: "a")
    #expect(try await users.cacher.loadData(param: "a") == 5)
    #expect(try await users.loadCachedData(param: "a")?.cachedAt == clock.dateProvider())
    #expect(users.count == 0)
    try await users.saveData(nil, param: "a")
    #expect(try await users.loadData(param: "a") == nil)
    clock.advance(by: .seconds(61))
    #expect(await users.needsRefresh(cachedAt: clock.dateProvider().addingTimeInterval(-61), param: "a"))
    #expect(await !users.needsRefresh(cachedAt: clock.dateProvider().addingTimeInterval(-59), param: "a"))
  }
}
