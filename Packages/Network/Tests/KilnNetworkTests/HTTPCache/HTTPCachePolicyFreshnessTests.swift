import Foundation
import KilnNetwork
import Testing

@Suite("HTTPCachePolicy freshness (RFC 9111 §4.2)")
struct HTTPCachePolicyFreshnessTests {
  let policy = HTTPCachePolicy()

  @Test("max-age gives the lifetime and wins over Expires")
  func maxAgeWins() {
    let stored = storedResponse(["Cache-Control": "max-age=60", "Expires": HTTPDate.format(t0.plus(3600))])
    #expect(policy.freshnessLifetime(of: stored) == 60)
  }

  @Test("Expires minus Date gives the lifetime without max-age")
  func expiresMinusDate() {
    let stored = storedResponse(["Expires": HTTPDate.format(t0.plus(300)), "Date": HTTPDate.format(t0.plus(-100))])
    #expect(policy.freshnessLifetime(of: stored) == 400)
  }

  @Test("an invalid Expires, such as 0, means already expired")
  func invalidExpires() {
    let stored = storedResponse(["Expires": "0"])
    #expect(policy.freshnessLifetime(of: stored) == 0)
    #expect(!policy.isFresh(stored, at: t0))
    #expect(policy.canStore(stored.response, for: getRequest()))
  }

  @Test("Expires in the past is stale; two different Expires are stale")
  func pastAndDuplicateExpires() {
    #expect(policy.freshnessLifetime(of: storedResponse(["Expires": HTTPDate.format(t0.plus(-10))])) == 0)
    var headers: HTTPHeaders = ["Expires": HTTPDate.format(t0.plus(600))]
    headers.add(HTTPDate.format(t0.plus(1200)), for: "Expires")
    #expect(policy.freshnessLifetime(of: storedResponse(headers)) == 0)
  }

  @Test("s-maxage gives the lifetime in a shared cache only")
  func sharedMaxAge() {
    let stored = storedResponse(["Cache-Control": "max-age=60, s-maxage=600"])
    #expect(HTTPCachePolicy.shared.freshnessLifetime(of: stored) == 600)
    #expect(HTTPCachePolicy.private.freshnessLifetime(of: stored) == 60)
  }

  @Test("heuristic freshness is 10 % of the time since Last-Modified for heuristically cacheable statuses")
  func heuristic() {
    let lastModified = HTTPDate.format(t0.plus(-10_000))
    #expect(policy.freshnessLifetime(of: storedResponse(["Last-Modified": lastModified])) == 1000)
    #expect(policy.freshnessLifetime(of: storedResponse(["Last-Modified": lastModified], status: 404)) == 1000)
    #expect(policy.freshnessLifetime(of: storedResponse(["Last-Modified": lastModified], status: 302)) == 0)
    #expect(policy.freshnessLifetime(of: storedResponse(["Last-Modified": lastModified], status: 500)) == 0)
    let publicRedirect = storedResponse(["Last-Modified": lastModified, "Cache-Control": "public"], status: 302)
    #expect(policy.freshnessLifetime(of: publicRedirect) == 1000)
    #expect(policy.freshnessLifetime(of: storedResponse([:])) == 0)
  }

  @Test("heuristic freshness follows the configured fraction and cap, and is never negative")
  func heuristicConfiguration() {
    let stored = storedResponse(["Last-Modified": HTTPDate.format(t0.plus(-10_000))])
    #expect(HTTPCachePolicy(heuristicFraction: 0.2).freshnessLifetime(of: stored) == 2000)
    #expect(HTTPCachePolicy(maximumHeuristicLifetime: 60).freshnessLifetime(of: stored) == 60)
    #expect(HTTPCachePolicy(heuristicFraction: 0).freshnessLifetime(of: stored) == 0)
    let future = storedResponse(["Last-Modified": HTTPDate.format(t0.plus(500))])
    #expect(policy.freshnessLifetime(of: future) == 0)
  }

  @Test("current age adds the stored time to the corrected initial age")
  func currentAge() {
    // Sent at t0, received 2 s later with Age: 10 and a Date 1 s before receipt.
    let stored = storedResponse(
      ["Age": "10", "Date": HTTPDate.format(t0.plus(1))], sent: t0, received: t0.plus(2))
    // corrected_age_value = 10 + 2; apparent_age = 1; corrected_initial_age = 12; resident 30.
    #expect(policy.currentAge(of: stored, at: t0.plus(32)) == 42)
  }

  @Test("a Date older than the receipt makes the apparent age count when Age is smaller")
  func apparentAge() {
    let stored = storedResponse(["Date": HTTPDate.format(t0.plus(-50)), "Age": "5"])
    #expect(policy.currentAge(of: stored, at: t0) == 50)
    let future = storedResponse(["Date": HTTPDate.format(t0.plus(500))])
    #expect(policy.currentAge(of: future, at: t0.plus(3)) == 3)
  }

  @Test("an invalid Age is ignored; a missing Date is the time of receipt")
  func invalidAge() {
    let stored = StoredHTTPResponse(
      response: HTTPResponse(status: 200, headers: ["Age": "ten", "Cache-Control": "max-age=60"]),
      requestTime: t0, responseTime: t0)
    #expect(stored.ageValue == 0)
    #expect(stored.dateValue == t0)
    #expect(policy.currentAge(of: stored, at: t0.plus(7)) == 7)
  }

  @Test("of several Age values, on one line or several, the first counts")
  func ageList() {
    func age(_ lines: [String]) -> Int {
      StoredHTTPResponse(
        response: HTTPResponse(status: 200, headers: HTTPHeaders(lines.map { ("Age", $0) })),
        requestTime: t0, responseTime: t0
      ).ageValue
    }
    #expect(age(["7200, 0"]) == 7200)
    #expect(age(["0, 7200"]) == 0)
    #expect(age(["7200", "0"]) == 7200)
    #expect(age(["0", "7200"]) == 0)
    #expect(age(["ten, 5"]) == 0)
  }

  @Test("fresh exactly while the lifetime exceeds the age")
  func freshBoundary() {
    let stored = storedResponse(["Cache-Control": "max-age=10"])
    #expect(policy.isFresh(stored, at: t0.plus(9.9)))
    #expect(!policy.isFresh(stored, at: t0.plus(10)))
    let aged = storedResponse(["Cache-Control": "max-age=10", "Age": "11"])
    #expect(!policy.isFresh(aged, at: t0))
  }

  // Found by Fuzz/CachePolicy: a stored entry's times are any finite values, and a response
  // time ~1e200 s away made a heuristic lifetime whose ttl trapped converting to Int.
  @Test("a stored entry with absurd times is served and answered without trapping, ttl clamped to 2³¹")
  func absurdStoredTimes() throws {
    let far = Date(timeIntervalSince1970: 1e200)
    let stored = StoredHTTPResponse(
      response: HTTPResponse(status: 200, headers: ["Last-Modified": HTTPDate.format(t0)]),
      requestTime: far, responseTime: far)
    let served = policy.servedResponse(stored, now: t0)
    #expect(served.headers["Age"] == "0")
    let status = try #require(served.headers.first("Cache-Status").flatMap(HTTPCacheStatus.init(member:)))
    #expect(status.ttl == CacheControl.maximumDeltaSeconds)
    guard case .serve = policy.decision(for: getRequest(), stored: stored, now: t0) else {
      Issue.record("a fresh entry was not served")
      return
    }
    let old = StoredHTTPResponse(
      response: HTTPResponse(status: 200, headers: ["Cache-Control": "max-age=60"]),
      requestTime: Date(timeIntervalSince1970: -1e308), responseTime: Date(timeIntervalSince1970: 1e308))
    #expect(policy.currentAge(of: old, at: t0) == .infinity)
    #expect(policy.servedResponse(old, now: t0).headers["Age"] == String(CacheControl.maximumDeltaSeconds))
    #expect(policy.staleResponse(for: getRequest(), stored: old, afterErrorStatus: nil, now: t0) != nil)
  }
}
