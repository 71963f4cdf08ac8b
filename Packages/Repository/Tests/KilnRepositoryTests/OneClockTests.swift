import Foundation
import KilnRepository
import KilnRepositoryTesting
import KilnTesting
import Synchronization
import Testing

/// One clock to wire: a repository made with a clock (or over a cacher with one) dates,
/// expires, invalidates and releases by it, and nothing it builds runs on another.
@Suite(.timeLimit(.minutes(1)))
struct OneClockTests {
  let clock = ManualClock()

  /// A custom cacher that is storage only: it names a clock and gives no `now` of its own.
  final class DictionaryCacher: Cacher, Sendable {
    let clock: any Clock<Duration>
    private let values = Mutex<[String: (Int, Date?)]>([:])
    var expiration: Duration? { .seconds(60) }

    init(clock: any Clock<Duration>) { self.clock = clock }

    func loadData(param: String) async throws -> Int? { values.withLock { $0[param]?.0 } }
    func saveData(_ data: Int?, param: String) async throws {
      values.withLock { $0[param] = data.map { ($0, nil) } }
    }
    func loadDataCachedAt(param: String) async throws -> Date? { values.withLock { $0[param]?.1 } }
    func saveDataCachedAt(_ cachedAt: Date?, param: String) async throws {
      values.withLock { values in values[param] = values[param].map { ($0.0, cachedAt) } }
    }
  }

  @Test("a repository made with one clock expires, invalidates and releases by it alone")
  func oneClockForEverything() async throws {
    let users = Repository<String, Int>(expiration: .seconds(60), clock: clock, releaseAfter: .seconds(600))
    #expect(users.now() == clock.dateProvider())
    #expect(users.cacher.now() == clock.dateProvider())
    let fetcher = ControlledFetcher<String, Int>()
    fetcher.succeed(0, with: 1)
    fetcher.succeed(1, with: 2)
    fetcher.succeed(2, with: 3)
    let flowable = AnyStoreFlowable.from(cacher: users, fetcher: fetcher, param: "a")
    #expect(try await flowable.requireData() == 1)
    // The default store dates the entry by the clock: valid until 60 s on it.
    let store = try #require(users.cacher as? StoreCacher<String, Int>).store
    let entry = try #require(await store.entry(forKey: "a"))
    #expect(entry.storedAt == clock.dateProvider())
    clock.advance(by: .seconds(59))
    #expect(try await flowable.requireData() == 1)
    clock.advance(by: .seconds(2))
    #expect(try await flowable.requireData() == 2)
    // An invalidation is dated by the same clock: it covers what was cached before it.
    clock.advance(by: .seconds(1))
    await users.invalidateAll()
    #expect(try await flowable.requireData() == 3)
    #expect(fetcher.callCount == 3)
    // The release delay runs on it too.
    #expect(users.count == 1)
    await clock.waitForSleepers(count: 1)
    clock.advance(by: .seconds(600))
    #expect(await poll(timeout: .seconds(30)) { users.count == 0 })
  }

  @Test("a repository over a custom cacher runs on the cacher's clock; the cacher's now is that clock's date")
  func customCachersClock() async throws {
    let custom = DictionaryCacher(clock: clock)
    clock.advance(by: .seconds(3_600))
    #expect(custom.now() == clock.dateProvider())
    let users = Repository(cacher: custom, releaseAfter: .seconds(10))
    #expect(users.now() == clock.dateProvider())
    // So its expiry follows the clock: cached now, expired 61 s later.
    let fetcher = ControlledFetcher<String, Int>()
    fetcher.succeed(0, with: 1)
    fetcher.succeed(1, with: 2)
    let flowable = AnyStoreFlowable.from(cacher: users, fetcher: fetcher, param: "a")
    #expect(try await flowable.requireData() == 1)
    #expect(try await flowable.requireData() == 1)
    clock.advance(by: .seconds(61))
    #expect(try await flowable.requireData() == 2)
    // And its release delay too.
    #expect(users.count == 1)
    await clock.waitForSleepers(count: 1)
    clock.advance(by: .seconds(10))
    #expect(await poll(timeout: .seconds(30)) { users.count == 0 })
  }
}
