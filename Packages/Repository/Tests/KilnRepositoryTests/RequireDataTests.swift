import Foundation
import KilnRepository
import KilnTesting
import Testing

/// `requireData` and `getData` for each source × cache state × fetch outcome.
@Suite(.timeLimit(.minutes(1)))
struct RequireDataTests {
  enum CacheState: CaseIterable, Sendable { case empty, valid, expired }

  struct Case: Sendable, CustomTestStringConvertible {
    var from: GettingFrom
    var cache: CacheState
    var fetchSucceeds: Bool
    var testDescription: String { "\(from) \(cache) \(fetchSucceeds ? "fetch ok" : "fetch fails")" }

    /// The seed's rules: `.cache` never fetches and returns only valid data; `.origin` always
    /// fetches; `.both` returns valid data, else fetches.
    var expected: (value: Int?, error: (any Error)?, fetches: Int) {
      switch (from, cache) {
      case (.cache, .valid): (1, nil, 0)
      case (.cache, _): (nil, NoSuchElementError(), 0)
      case (.both, .valid): (1, nil, 0)
      case (.origin, _), (.both, _): fetchSucceeds ? (2, nil, 1) : (nil, TestError("down"), 1)
      }
    }
  }

  static let cases: [Case] = [GettingFrom.both, .origin, .cache].flatMap { from in
    CacheState.allCases.flatMap { cache in [true, false].map { Case(from: from, cache: cache, fetchSucceeds: $0) } }
  }

  @Test("requireData and getData", arguments: cases)
  func requireData(_ testCase: Case) async throws {
    let clock = ManualClock()
    let memory = MemoryCache<String, Int>(entryLifetime: nil, now: clock.dateProvider)
    let repository = Repository(store: memory, expiration: .seconds(60), clock: clock)
    if testCase.cache != .empty { memory.setValue(1, forKey: "a", expiresAt: nil) }
    if testCase.cache == .expired { clock.advance(by: .seconds(61)) }
    let succeeds = testCase.fetchSucceeds
    let fetcher = CountingFetcher<Int> { _ in
      guard succeeds else { throw TestError("down") }
      return 2
    }
    let flowable = AnyStoreFlowable.from(cacher: repository, fetcher: fetcher, param: "a")
    let expected = testCase.expected
    do {
      let value = try await flowable.requireData(from: testCase.from)
      #expect(value == expected.value)
    } catch let error as NoSuchElementError {
      #expect(expected.error is NoSuchElementError, "\(error)")
    } catch let error as TestError {
      #expect(expected.error as? TestError == error)
    }
    #expect(await flowable.getData(from: testCase.from) == expected.value)
    // Twice the fetches, except that a successful `.both` fetch fills the cache for the second call.
    let refilled = testCase.from == .both && testCase.fetchSucceeds && expected.fetches == 1
    #expect(fetcher.calls.value == (refilled ? 1 : expected.fetches * 2))
    // A failed fetch never throws the cached data away.
    if testCase.cache != .empty {
      #expect(memory["a"] != nil)
    }
  }
}
