import Foundation
import KilnQuery
import KilnTesting
import Testing

@Suite("expiring(validationPolicy:)", .timeLimit(.minutes(1)))
struct ExpiringStorageTests {
  @Test("never reads the storage when the policy says invalid")
  func invalidSkipsRead() async {
    let now = ManualDate()
    let cache = SpyStorage<Int>(value: 1, now: now.provider)
    now.advance(by: .seconds(61))
    let expiring = cache.expiring(validationPolicy: .maxAge(.seconds(60)), now: now.provider)

    let result = await expiring.result()

    #expect(result.failure as? ExpiringCacheError == .expired)
    #expect(cache.loadCount == 0)
    #expect(cache.timestampReadCount == 1)
  }

  @Test("an empty storage is invalid for maxAge and is not read")
  func emptyIsExpired() async {
    let cache = SpyStorage<Int>()
    let result = await cache.expiring(validationPolicy: .maxAge(.seconds(60))).result()
    #expect(result.failure as? ExpiringCacheError == .expired)
    #expect(cache.loadCount == 0)
  }

  @Test("a valid timestamp returns the storage's own result")
  func validReadsStorage() async throws {
    let now = ManualDate()
    let cache = SpyStorage<Int>(value: 5, now: now.provider)
    now.advance(by: .seconds(60))  // exactly the maximum age: still valid
    let expiring = cache.expiring(validationPolicy: .maxAge(.seconds(60)), now: now.provider)
    #expect(try await expiring.load() == 5)
    #expect(cache.loadCount == 1)
  }

  @Test("the storage's own failure comes through when the policy says valid")
  func validPassesStorageFailure() async {
    let cache = SpyStorage<Int>()
    let emptyButValid = await cache.expiring(validationPolicy: .alwaysValid).result()
    #expect(emptyButValid.failure as? StorageError == .empty)

    let broken = SpyStorage<Int>(value: 1)
    broken.failLoads(with: TestError("disk"))
    let failing = await broken.expiring(validationPolicy: .alwaysValid).result()
    #expect(failing.failure as? TestError == TestError("disk"))
  }

  @Test("the policy is asked each load, with the injected clock")
  func policyAskedEachLoad() async throws {
    let now = ManualDate()
    let cache = SpyStorage<Int>(value: 9, now: now.provider)
    let expiring = cache.expiring(validationPolicy: .maxAge(.seconds(10)), now: now.provider)
    #expect(try await expiring.load() == 9)
    now.advance(by: .seconds(11))
    #expect(await expiring.result().failure as? ExpiringCacheError == .expired)
    try await expiring.save(10)  // saving through the decorator stamps a fresh timestamp
    #expect(try await expiring.load() == 10)
    #expect(cache.savedValues == [10])
  }

  @Test("it is a storage: timestamp, save and clear reach the base storage")
  func forwardsStorageOperations() async throws {
    let now = ManualDate()
    let cache = SpyStorage<Int>(now: now.provider)
    let expiring = cache.expiring(validationPolicy: .alwaysValid, now: now.provider)
    #expect(await expiring.timestamp == nil)
    #expect(await expiring.isValid)  // alwaysValid even when empty
    try await expiring.save(3)
    #expect(await expiring.timestamp == now.now)
    #expect(cache.value == 3)
    try await expiring.clear()
    #expect(cache.clearCount == 1)
    #expect(cache.value == nil)
  }

  @Test("the constant policies read neither the clock nor the timestamp")
  func constantPoliciesReadNoClock() async throws {
    let clockReads = Recorder<Date>()
    let now: @Sendable () -> Date = {
      let date = Date()
      clockReads.append(date)
      return date
    }
    let cache = SpyStorage<Int>(value: 4, timestamp: Date())

    let never = cache.expiring(validationPolicy: .neverValid, now: now)
    #expect(await never.result().failure as? ExpiringCacheError == .expired)
    #expect(await never.isValid == false)
    #expect(cache.loadCount == 0)

    let always = cache.expiring(validationPolicy: .alwaysValid, now: now)
    #expect(try await always.load() == 4)
    #expect(await always.isValid)
    #expect(cache.loadCount == 1)

    #expect(clockReads.values.isEmpty)
    #expect(cache.timestampReadCount == 0)

    // Any other policy still asks the clock once per load.
    #expect(try await cache.expiring(validationPolicy: .maxAge(.seconds(60)), now: now).load() == 4)
    #expect(clockReads.values.count == 1)
    #expect(cache.timestampReadCount == 1)
  }
}
