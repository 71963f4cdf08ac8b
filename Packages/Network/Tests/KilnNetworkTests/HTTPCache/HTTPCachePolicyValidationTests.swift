import Foundation
import KilnNetwork
import Testing

@Suite("HTTPCachePolicy validation, errors and invalidation (RFC 9111 §4.3, §4.4, RFC 5861 §4)")
struct HTTPCachePolicyValidationTests {
  let policy = HTTPCachePolicy()

  @Test("a 304 replaces the stored header fields, keeps the body, Content-Length and hop-by-hop fields out")
  func notModifiedMerges() throws {
    let stored = storedResponse([
      "Cache-Control": "max-age=10", "ETag": "\"v1\"", "Content-Length": "4", "X-Old": "kept", "X-Changed": "old",
    ])
    let notModified = HTTPResponse(
      status: 304,
      headers: [
        "Cache-Control": "max-age=100", "ETag": "\"v1\"", "Content-Length": "0", "X-Changed": "new",
        "Connection": "close", "Date": HTTPDate.format(t0.plus(51)),
      ])
    let updated = try #require(
      policy.updating(stored, with: notModified, requestTime: t0.plus(50), responseTime: t0.plus(51)))
    #expect(updated.response.status == 200)
    #expect(updated.response.body == Data("body".utf8))
    #expect(updated.response.headers["Cache-Control"] == "max-age=100")
    #expect(updated.response.headers["Content-Length"] == "4")
    #expect(updated.response.headers["X-Old"] == "kept")
    #expect(updated.response.headers["X-Changed"] == "new")
    #expect(updated.response.headers["Connection"] == nil)
    #expect(updated.requestTime == t0.plus(50) && updated.responseTime == t0.plus(51))
    #expect(policy.freshnessLifetime(of: updated) == 100)
    // Date now says t0 + 51; the round trip took 1 s: fresh until t0 + 150.
    #expect(policy.currentAge(of: updated, at: t0.plus(100)) == 50)
    #expect(policy.isFresh(updated, at: t0.plus(149)))
    #expect(!policy.isFresh(updated, at: t0.plus(150)))
  }

  @Test("a 304 with another ETag or Last-Modified is not about the stored response")
  func notModifiedMismatch() {
    let stored = storedResponse(["ETag": "\"v1\"", "Last-Modified": HTTPDate.format(t0.plus(-100))])
    let otherTag = HTTPResponse(status: 304, headers: ["ETag": "\"v2\""])
    #expect(policy.updating(stored, with: otherTag, requestTime: t0, responseTime: t0) == nil)
    let weakSame = HTTPResponse(status: 304, headers: ["ETag": "W/\"v1\""])
    #expect(policy.updating(stored, with: weakSame, requestTime: t0, responseTime: t0) != nil)
    let modifiedOnly = storedResponse(["Last-Modified": HTTPDate.format(t0.plus(-100))])
    let otherDate = HTTPResponse(status: 304, headers: ["Last-Modified": HTTPDate.format(t0.plus(-5))])
    #expect(policy.updating(modifiedOnly, with: otherDate, requestTime: t0, responseTime: t0) == nil)
    let sameDate = HTTPResponse(status: 304, headers: ["Last-Modified": HTTPDate.format(t0.plus(-100))])
    #expect(policy.updating(modifiedOnly, with: sameDate, requestTime: t0, responseTime: t0) != nil)
    let noValidator = HTTPResponse(status: 304, headers: ["Cache-Control": "max-age=5"])
    #expect(policy.updating(stored, with: noValidator, requestTime: t0, responseTime: t0) != nil)
    let tagless = storedResponse(["Cache-Control": "max-age=1"])
    #expect(policy.updating(tagless, with: otherTag, requestTime: t0, responseTime: t0) == nil)
  }

  @Test(
    "stale-if-error serves stale on 500, 502, 503, 504 and a failed connection, within the window",
    arguments: [500, 502, 503, 504, nil] as [Int?])
  func staleIfError(status: Int?) throws {
    let stored = storedResponse(["Cache-Control": "max-age=10, stale-if-error=60"])
    let stale = try #require(
      policy.staleResponse(for: getRequest(), stored: stored, afterErrorStatus: status, now: t0.plus(70)))
    #expect(stale.status == 200)
    #expect(stale.headers["Age"] == "70")
    #expect(stale.cacheStatus?.detail == "stale-if-error")
    #expect(stale.cacheStatus?.forwardStatus == status)
    let late = policy.staleResponse(for: getRequest(), stored: stored, afterErrorStatus: status, now: t0.plus(71))
    if status == nil {
      #expect(late?.cacheStatus?.detail == "disconnected")  // a disconnected cache may serve stale
    } else {
      #expect(late == nil)
    }
  }

  @Test("without any answer a stale response is served unless forbidden, asked against, or turned off")
  func disconnected() {
    let stored = storedResponse(["Cache-Control": "max-age=10"])
    let served = policy.staleResponse(for: getRequest(), stored: stored, afterErrorStatus: nil, now: t0.plus(1e5))
    #expect(served?.headers["Age"] == "100000" && served?.cacheStatus?.detail == "disconnected")
    for directives in ["no-cache", "max-age=5", "min-fresh=1"] {
      let request = getRequest(["Cache-Control": directives])
      #expect(policy.staleResponse(for: request, stored: stored, afterErrorStatus: nil, now: t0.plus(20)) == nil)
    }
    let strict = storedResponse(["Cache-Control": "max-age=10, must-revalidate"])
    #expect(policy.staleResponse(for: getRequest(), stored: strict, afterErrorStatus: nil, now: t0.plus(20)) == nil)
    let off = HTTPCachePolicy(servesStaleWhenDisconnected: false)
    #expect(off.staleResponse(for: getRequest(), stored: stored, afterErrorStatus: nil, now: t0.plus(20)) == nil)
  }

  @Test("stale-if-error ignores other statuses and never passes must-revalidate or no-cache")
  func staleIfErrorLimits() {
    let stored = storedResponse(["Cache-Control": "max-age=10, stale-if-error=60"])
    for status in [400, 404, 501, 505] {
      #expect(
        policy.staleResponse(for: getRequest(), stored: stored, afterErrorStatus: status, now: t0.plus(20)) == nil)
    }
    for directives in ["max-age=10, stale-if-error=60, must-revalidate", "no-cache, stale-if-error=60"] {
      let strict = storedResponse(["Cache-Control": directives])
      #expect(policy.staleResponse(for: getRequest(), stored: strict, afterErrorStatus: 503, now: t0.plus(20)) == nil)
    }
    let plain = storedResponse(["Cache-Control": "max-age=10"])
    #expect(policy.staleResponse(for: getRequest(), stored: plain, afterErrorStatus: 503, now: t0.plus(20)) == nil)
  }

  @Test("a request's stale-if-error allows serving stale too")
  func requestStaleIfError() {
    let plain = storedResponse(["Cache-Control": "max-age=10"])
    let request = getRequest(["Cache-Control": "stale-if-error=30"])
    #expect(policy.staleResponse(for: request, stored: plain, afterErrorStatus: 502, now: t0.plus(40)) != nil)
    #expect(policy.staleResponse(for: request, stored: plain, afterErrorStatus: 502, now: t0.plus(41)) == nil)
  }

  @Test("a successful unsafe method invalidates its URL and same-origin Location and Content-Location")
  func invalidation() {
    let post = HTTPRequest(method: .post, url: URL(string: "https://api.example.com/articles")!)
    let response = HTTPResponse(
      status: 201,
      headers: ["Location": "/articles/7", "Content-Location": "https://other.example.com/articles/7"])
    #expect(
      policy.invalidatedURLs(for: post, response: response).map(\.absoluteString) == [
        "https://api.example.com/articles", "https://api.example.com/articles/7",
      ])
    let samePort = HTTPResponse(status: 303, headers: ["Content-Location": "https://API.example.com:443/x"])
    #expect(policy.invalidatedURLs(for: post, response: samePort).count == 2)
    let otherPort = HTTPResponse(status: 200, headers: ["Location": "https://api.example.com:8443/x"])
    #expect(policy.invalidatedURLs(for: post, response: otherPort).count == 1)
  }

  @Test("errors and safe methods invalidate nothing", arguments: [400, 404, 500, 503])
  func noInvalidation(status: Int) {
    let delete = HTTPRequest(method: .delete, url: exampleURL)
    #expect(policy.invalidatedURLs(for: delete, response: HTTPResponse(status: status)).isEmpty)
    #expect(policy.invalidatedURLs(for: getRequest(), response: HTTPResponse(status: 200)).isEmpty)
    #expect(!policy.invalidatedURLs(for: delete, response: HTTPResponse(status: 204)).isEmpty)
  }
}
