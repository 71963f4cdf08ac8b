import Foundation
import Testing

@testable import KilnNetwork

@Suite("HTTPCachePolicy decisions (RFC 9111 §4, RFC 5861)")
struct HTTPCachePolicyDecisionTests {
  let policy = HTTPCachePolicy()

  @Test("a fresh response is served with its current age in whole seconds and a Cache-Status hit")
  func freshHit() throws {
    let stored = storedResponse(["Cache-Control": "max-age=60", "Age": "3"], sent: t0.plus(-1))
    let response = try #require(policy.decision(for: getRequest(), stored: stored, now: t0.plus(10.7)).servedResponse)
    #expect(response.headers["Age"] == "14")
    #expect(response.body == Data("body".utf8))
    let status = try #require(response.cacheStatus)
    #expect(status.hit && status.forward == nil && status.ttl == 45)
  }

  @Test("nothing stored: forward the request as a uri-miss, or generate a 504 for only-if-cached")
  func miss() throws {
    #expect(policy.decision(for: getRequest(), stored: nil, now: t0) == .forward(getRequest(), reason: .uriMiss))
    let generated = try #require(
      policy.decision(for: getRequest(["Cache-Control": "only-if-cached"]), stored: nil, now: t0).generatedResponse)
    #expect(generated.status == 504)
    #expect(generated.isGeneratedByCache)
    #expect(generated.headers["Date"] == HTTPDate.format(t0))
  }

  @Test("non-GET methods, and Range requests the stored response cannot answer, are forwarded unchanged")
  func bypass() {
    let stored = storedResponse(["Cache-Control": "max-age=60"])
    let head = HTTPRequest(method: .head, url: exampleURL)
    #expect(policy.decision(for: head, stored: stored, now: t0) == .forward(head, reason: .method))
    let range = getRequest(["Range": "bytes=0-1"])
    #expect(policy.decision(for: range, stored: stored, now: t0.plus(60)) == .forward(range, reason: .bypass))
    #expect(policy.decision(for: range, stored: nil, now: t0) == .forward(range, reason: .bypass))
    for value in ["bytes=0-1, 2-3", "bytes=9-", "bytes=3-1", "bytes=-0", "items=0-1", "bytes=a-b"] {
      let request = getRequest(["Range": value])
      #expect(policy.decision(for: request, stored: stored, now: t0) == .forward(request, reason: .bypass), "\(value)")
    }
    let ifRange = getRequest(["Range": "bytes=0-1", "If-Range": "\"v1\""])
    #expect(policy.decision(for: ifRange, stored: stored, now: t0) == .forward(ifRange, reason: .bypass))
    // A stored 206 answers only ranges it holds, and never a request for the whole.
    let partial = storedResponse(["Cache-Control": "max-age=60", "Content-Range": "bytes 0-3/10"], status: 206)
    for value in ["bytes=2-5", "bytes=-2", "bytes=4-"] {
      let request = getRequest(["Range": value])
      #expect(policy.decision(for: request, stored: partial, now: t0) == .forward(request, reason: .bypass), "\(value)")
    }
    #expect(policy.decision(for: getRequest(), stored: partial, now: t0) == .forward(getRequest(), reason: .uriMiss))
    let onlyIfCached = getRequest(["Cache-Control": "only-if-cached"])
    #expect(policy.decision(for: onlyIfCached, stored: partial, now: t0).generatedResponse?.status == 504)
  }

  @Test("a fresh immutable response answers a reload (max-age=0) but not a forced one (no-cache), nor once stale")
  func immutableReload() {
    let immutable = storedResponse(["Cache-Control": "max-age=60, immutable", "ETag": "\"v\""])
    let reload = getRequest(["Cache-Control": "max-age=0"])
    #expect(policy.decision(for: reload, stored: immutable, now: t0.plus(10)).servedResponse != nil)
    let forced = getRequest(["Cache-Control": "no-cache"])
    #expect(policy.decision(for: forced, stored: immutable, now: t0.plus(10)).servedResponse == nil)
    #expect(policy.decision(for: reload, stored: immutable, now: t0.plus(61)).servedResponse == nil)
    let asked = getRequest(["Cache-Control": "max-age=5"])
    #expect(
      policy.decision(for: asked, stored: immutable, now: t0.plus(10)).servedResponse == nil, "max-age=5 still holds")
    let mutable = storedResponse(["Cache-Control": "max-age=60", "ETag": "\"v\""])
    #expect(policy.decision(for: reload, stored: mutable, now: t0.plus(10)).servedResponse == nil)
  }

  @Test("a client's If-Modified-Since is answered 304 from the stored response's Date when it has no Last-Modified")
  func ifModifiedSinceWithoutLastModified() throws {
    let stored = storedResponse(["Cache-Control": "max-age=60"])  // Date: t0
    let later = getRequest(["If-Modified-Since": HTTPDate.format(t0.plus(-3000))])
    #expect(try #require(policy.decision(for: later, stored: stored, now: t0.plus(5)).servedResponse).status == 200)
    let after = getRequest(["If-Modified-Since": HTTPDate.format(t0)])
    #expect(try #require(policy.decision(for: after, stored: stored, now: t0.plus(5)).servedResponse).status == 304)
  }

  @Test("a fresh stored 206 serves the ranges it holds, sliced, with its own Content-Range length")
  func rangeFromStoredPartial() throws {
    let partial = storedResponse(
      ["Cache-Control": "max-age=60", "Content-Range": "bytes 4-8/10", "Content-Length": "5"], status: 206,
      body: "45678")
    for (value, body, contentRange) in [
      ("bytes=4-8", "45678", "bytes 4-8/10"), ("bytes=5-6", "56", "bytes 5-6/10"), ("bytes=6-8", "678", "bytes 6-8/10"),
      ("bytes=8-8", "8", "bytes 8-8/10"),
    ] {
      let response = try #require(
        policy.decision(for: getRequest(["Range": value]), stored: partial, now: t0.plus(5)).servedResponse,
        "\(value)")
      #expect(response.status == 206)
      #expect(response.body == Data(body.utf8), "\(value)")
      #expect(response.headers["Content-Range"] == contentRange)
      #expect(response.headers["Content-Length"] == String(body.utf8.count))
      #expect(response.headers["Age"] == "5")
    }
    // Byte 9 is not held: `8-` runs to the end of the representation.
    let pastHeld = getRequest(["Range": "bytes=8-"])
    #expect(policy.decision(for: pastHeld, stored: partial, now: t0.plus(5)) == .forward(pastHeld, reason: .bypass))
    // Stale: forwarded like any stale response.
    let stale = getRequest(["Range": "bytes=5-6"])
    #expect(policy.decision(for: stale, stored: partial, now: t0.plus(61)) == .forward(stale, reason: .bypass))
  }

  @Test("two 206s combine into a 200 only when the second completes the first under the same strong validator")
  func combiningPartials() throws {
    func partial(_ range: String, _ body: String, _ headers: HTTPHeaders) -> HTTPResponse {
      var headers = headers
      headers.set(range, for: "Content-Range")
      headers.set(String(body.utf8.count), for: "Content-Length")
      return HTTPResponse(status: 206, headers: headers, body: Data(body.utf8))
    }
    let first = partial("bytes 0-4/10", "01234", ["ETag": "\"v1\"", "A": "1"])
    let combined = try #require(
      HTTPCachePolicy.combining(first, with: partial("bytes 5-9/10", "56789", ["ETag": "\"v1\"", "A": "2"])))
    #expect(combined.status == 200)
    #expect(combined.body == Data("0123456789".utf8))
    #expect(combined.headers["Content-Length"] == "10")
    #expect(combined.headers["Content-Range"] == nil)
    #expect(combined.headers["A"] == "2", "the newer response's fields")
    let modified = "Wed, 01 Jan 2020 00:00:00 GMT"
    let byDate = partial("bytes 0-4/10", "01234", ["Last-Modified": modified, "Date": "Wed, 01 Jan 2020 00:00:01 GMT"])
    #expect(
      HTTPCachePolicy.combining(byDate, with: partial("bytes 5-9/10", "56789", ["Last-Modified": modified])) != nil)
    // A Last-Modified less than a second before Date is weak (RFC 9110 §8.8.2.2): two versions may share it.
    let weakDate = partial("bytes 0-4/10", "01234", ["Last-Modified": modified, "Date": modified])
    #expect(
      HTTPCachePolicy.combining(weakDate, with: partial("bytes 5-9/10", "56789", ["Last-Modified": modified])) == nil)
    for rest in [
      partial("bytes 5-9/10", "56789", ["ETag": "\"v2\""]),  // another representation
      partial("bytes 5-9/10", "56789", [:]),  // no validator
      partial("bytes 6-9/10", "6789", ["ETag": "\"v1\""]),  // a gap
      partial("bytes 5-8/10", "5678", ["ETag": "\"v1\""]),  // not to the end
      partial("bytes 5-10/11", "56789A", ["ETag": "\"v1\""]),  // another length
    ] {
      #expect(HTTPCachePolicy.combining(first, with: rest) == nil, "\(rest.headers)")
    }
    let weak = partial("bytes 0-4/10", "01234", ["ETag": "W/\"v1\""])
    #expect(HTTPCachePolicy.combining(weak, with: partial("bytes 5-9/10", "56789", ["ETag": "W/\"v1\""])) == nil)
    #expect(HTTPCachePolicy.combining(byDate, with: partial("bytes 5-9/10", "56789", [:])) == nil)
  }

  @Test("one byte range of a fresh stored response is served as a 206 with Content-Range")
  func rangeFromStored() throws {
    let stored = storedResponse(["Cache-Control": "max-age=60", "Content-Length": "11", "A": "1"], body: "01234567890")
    for (value, body, contentRange) in [
      ("bytes=0-1", "01", "bytes 0-1/11"), ("bytes=1-", "1234567890", "bytes 1-10/11"),
      ("bytes=-1", "0", "bytes 10-10/11"), ("bytes=8-20", "890", "bytes 8-10/11"),
      ("bytes=-20", "01234567890", "bytes 0-10/11"),
    ] {
      let response = try #require(
        policy.decision(for: getRequest(["Range": value]), stored: stored, now: t0.plus(5)).servedResponse, "\(value)")
      #expect(response.status == 206)
      #expect(response.body == Data(body.utf8))
      #expect(response.headers["Content-Range"] == contentRange)
      #expect(response.headers["Content-Length"] == String(body.utf8.count))
      #expect(response.headers["A"] == "1" && response.headers["Age"] == "5")
      #expect(response.cacheStatus?.hit == true)
    }
  }

  @Test("a stale response is revalidated with If-None-Match and If-Modified-Since")
  func staleRevalidates() throws {
    let lastModified = HTTPDate.format(t0.plus(-3600))
    let stored = storedResponse(["Cache-Control": "max-age=10", "ETag": "W/\"v1\"", "Last-Modified": lastModified])
    let decision = policy.decision(for: getRequest(["Accept": "*/*"]), stored: stored, now: t0.plus(10))
    #expect(decision.forwardReason == .stale)
    let request = try #require(decision.forwardedRequest)
    #expect(request.headers["If-None-Match"] == "W/\"v1\"")
    #expect(request.headers["If-Modified-Since"] == lastModified)
    #expect(request.headers["Accept"] == "*/*")
  }

  @Test("a client's If-None-Match or If-Modified-Since matching a fresh response gets a 304 from the cache")
  func cacheAnswersPreconditions() throws {
    let modified = HTTPDate.format(t0.plus(-5000))
    let stored = storedResponse(
      ["Cache-Control": "max-age=60", "ETag": "\"abc\"", "Last-Modified": modified, "Content-Length": "4"])
    for tags in ["\"abc\"", "W/\"abc\"", "\"x\", \"abc\"", "*"] {
      let response = try #require(
        policy.decision(for: getRequest(["If-None-Match": tags]), stored: stored, now: t0.plus(1)).servedResponse)
      #expect(response.status == 304 && response.body.isEmpty, "\(tags)")
      #expect(response.headers["ETag"] == "\"abc\"" && response.headers["Content-Length"] == nil)
      #expect(response.cacheStatus?.hit == true)
    }
    let other = policy.decision(for: getRequest(["If-None-Match": "\"x\""]), stored: stored, now: t0.plus(1))
    #expect(other.servedResponse?.status == 200)
    let since = policy.decision(
      for: getRequest(["If-Modified-Since": HTTPDate.format(t0.plus(-10))]), stored: stored, now: t0.plus(1))
    #expect(since.servedResponse?.status == 304)
    let before = policy.decision(
      for: getRequest(["If-Modified-Since": HTTPDate.format(t0.plus(-6000))]), stored: stored, now: t0.plus(1))
    #expect(before.servedResponse?.status == 200)
    // If-None-Match takes precedence over If-Modified-Since.
    let precedence = getRequest(["If-None-Match": "\"x\"", "If-Modified-Since": HTTPDate.format(t0)])
    #expect(policy.decision(for: precedence, stored: stored, now: t0.plus(1)).servedResponse?.status == 200)
    // A stale stored response is not answered from the cache: the preconditions go to the origin.
    #expect(
      policy.decision(for: getRequest(["If-None-Match": "\"abc\""]), stored: stored, now: t0.plus(61)).forwardReason
        == .stale)
  }

  @Test("a request with its own preconditions keeps them")
  func clientConditional() {
    let stored = storedResponse(["Cache-Control": "max-age=10", "ETag": "\"v1\""])
    let request = getRequest(["If-None-Match": "\"mine\""])
    #expect(policy.decision(for: request, stored: stored, now: t0.plus(20)).forwardedRequest == request)
  }

  @Test("response no-cache always revalidates, even when fresh")
  func responseNoCache() {
    let stored = storedResponse(["Cache-Control": "no-cache, max-age=3600", "ETag": "\"v1\""])
    let decision = policy.decision(for: getRequest(), stored: stored, now: t0)
    #expect(decision.forwardReason == .stale)
    #expect(decision.forwardedRequest?.headers["If-None-Match"] == "\"v1\"")
  }

  @Test(
    "request no-cache, Pragma: no-cache, max-age=0 and unmet min-fresh go to the origin",
    arguments: [
      ["Cache-Control": "no-cache"], ["Pragma": "no-cache"], ["Cache-Control": "max-age=0"],
      ["Cache-Control": "max-age=5"], ["Cache-Control": "min-fresh=3590"],
    ] as [HTTPHeaders])
  func requestDirectives(headers: HTTPHeaders) {
    let stored = storedResponse(["Cache-Control": "max-age=3600", "ETag": "\"v1\""])
    let decision = policy.decision(for: getRequest(headers), stored: stored, now: t0.plus(20))
    #expect(decision.forwardReason == .request)
    #expect(decision.forwardedRequest?.headers["If-None-Match"] == "\"v1\"")
  }

  @Test("Pragma is ignored when the request has Cache-Control; satisfied request limits serve")
  func requestLimitsMet() {
    let stored = storedResponse(["Cache-Control": "max-age=3600"])
    let now = t0.plus(20)
    #expect(
      policy.decision(for: getRequest(["Pragma": "no-cache", "Cache-Control": "max-age=30"]), stored: stored, now: now)
        .servedResponse != nil)
    #expect(
      policy.decision(for: getRequest(["Cache-Control": "min-fresh=60"]), stored: stored, now: now).servedResponse
        != nil)
  }

  @Test("max-stale serves a stale response within its limit, never past must-revalidate")
  func maxStale() {
    let stored = storedResponse(["Cache-Control": "max-age=10"])
    let request = getRequest(["Cache-Control": "max-stale=30"])
    #expect(policy.decision(for: request, stored: stored, now: t0.plus(40)).servedResponse?.headers["Age"] == "40")
    #expect(policy.decision(for: request, stored: stored, now: t0.plus(41)).forwardReason == .stale)
    #expect(
      policy.decision(for: getRequest(["Cache-Control": "max-stale"]), stored: stored, now: t0.plus(1e6)).servedResponse
        != nil)
    let strict = storedResponse(["Cache-Control": "max-age=10, must-revalidate"])
    #expect(policy.decision(for: request, stored: strict, now: t0.plus(11)).forwardReason == .stale)
  }

  @Test("stale-while-revalidate serves stale within its window and asks for a background revalidation")
  func staleWhileRevalidate() throws {
    let stored = storedResponse(["Cache-Control": "max-age=10, stale-while-revalidate=30", "ETag": "\"v1\""])
    let decision = policy.decision(for: getRequest(), stored: stored, now: t0.plus(25))
    guard case .serveStale(let response, let revalidation) = decision else {
      Issue.record("expected serveStale, got \(decision)")
      return
    }
    #expect(response.headers["Age"] == "25")
    #expect(response.cacheStatus?.detail == "stale-while-revalidate")
    #expect(response.cacheStatus?.ttl == -15)
    #expect(revalidation.headers["If-None-Match"] == "\"v1\"")
    #expect(policy.decision(for: getRequest(), stored: stored, now: t0.plus(41)).forwardReason == .stale)
    #expect(policy.decision(for: getRequest(), stored: stored, now: t0.plus(40)).isServeStale)
  }

  @Test("stale-while-revalidate does not apply past must-revalidate, no-cache or a request's no-cache")
  func staleWhileRevalidateLimits() {
    let strict = storedResponse(["Cache-Control": "max-age=10, stale-while-revalidate=30, must-revalidate"])
    #expect(policy.decision(for: getRequest(), stored: strict, now: t0.plus(15)).forwardReason == .stale)
    let swr = storedResponse(["Cache-Control": "max-age=10, stale-while-revalidate=30"])
    #expect(
      policy.decision(for: getRequest(["Cache-Control": "no-cache"]), stored: swr, now: t0.plus(15)).forwardReason
        == .request)
  }

  @Test("only-if-cached serves what may be served and generates a 504 for the rest")
  func onlyIfCached() throws {
    let request = getRequest(["Cache-Control": "only-if-cached"])
    let stored = storedResponse(["Cache-Control": "max-age=10, stale-while-revalidate=30"])
    #expect(policy.decision(for: request, stored: stored, now: t0.plus(5)).servedResponse != nil)
    let stale = try #require(policy.decision(for: request, stored: stored, now: t0.plus(15)).generatedResponse)
    #expect(stale.status == 504 && stale.isGeneratedByCache)
    let staleAllowed = getRequest(["Cache-Control": "only-if-cached, max-stale=100"])
    #expect(policy.decision(for: staleAllowed, stored: stored, now: t0.plus(15)).servedResponse != nil)
  }

  @Test("Vary: the stored response answers only requests with the same values of the named fields")
  func vary() {
    let request = getRequest(["Accept-Language": "en", "Accept": "text/html"])
    let stored = storedResponse(["Cache-Control": "max-age=60", "Vary": "Accept-Language"], request: request)
    #expect(policy.decision(for: getRequest(["accept-language": "en"]), stored: stored, now: t0).servedResponse != nil)
    #expect(
      policy.decision(for: getRequest(["Accept-Language": "fr"]), stored: stored, now: t0).forwardReason == .varyMiss)
    #expect(policy.decision(for: getRequest(), stored: stored, now: t0).forwardReason == .varyMiss)
    let absent = storedResponse(["Cache-Control": "max-age=60", "Vary": "X-Absent"], request: request)
    #expect(policy.decision(for: getRequest(), stored: absent, now: t0).servedResponse != nil)
    #expect(policy.decision(for: getRequest(["X-Absent": ""]), stored: absent, now: t0).forwardReason == .varyMiss)
  }

  @Test("Vary: * never matches, even the same request")
  func varyStar() {
    let stored = storedResponse(["Cache-Control": "max-age=60", "Vary": "*"])
    #expect(!stored.matchesVary(of: getRequest()))
    #expect(policy.decision(for: getRequest(), stored: stored, now: t0).forwardReason == .varyMiss)
  }

  @Test("a shared cache serves s-maxage responses stale never; a private one may with max-stale")
  func sharedStale() {
    let stored = storedResponse(["Cache-Control": "max-age=10, s-maxage=10"])
    let request = getRequest(["Cache-Control": "max-stale=60"])
    #expect(HTTPCachePolicy.shared.decision(for: request, stored: stored, now: t0.plus(20)).forwardReason == .stale)
    #expect(HTTPCachePolicy.private.decision(for: request, stored: stored, now: t0.plus(20)).servedResponse != nil)
    let proxy = storedResponse(["Cache-Control": "max-age=10, proxy-revalidate"])
    #expect(HTTPCachePolicy.shared.decision(for: request, stored: proxy, now: t0.plus(20)).forwardReason == .stale)
    #expect(HTTPCachePolicy.private.decision(for: request, stored: proxy, now: t0.plus(20)).servedResponse != nil)
  }

  @Test("served Age is capped at 2^31")
  func ageCap() {
    let stored = storedResponse(["Cache-Control": "max-age=2147483648", "Age": "2147483647"])
    let request = getRequest(["Cache-Control": "max-stale"])
    #expect(
      policy.decision(for: request, stored: stored, now: t0.plus(10)).servedResponse?.headers["Age"] == "2147483648")
  }
}
