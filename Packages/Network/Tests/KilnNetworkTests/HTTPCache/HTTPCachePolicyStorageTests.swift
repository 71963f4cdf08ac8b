import Foundation
import KilnNetwork
import Testing

@Suite("HTTPCachePolicy storing (RFC 9111 §3)")
struct HTTPCachePolicyStorageTests {
  let policy = HTTPCachePolicy()

  func response(_ headers: HTTPHeaders, status: Int = 200) -> HTTPResponse {
    HTTPResponse(status: status, headers: headers, body: Data("x".utf8))
  }

  @Test("explicit freshness, public, private or a heuristically cacheable status make a response storable")
  func storable() {
    #expect(policy.canStore(response(["Cache-Control": "max-age=60"]), for: getRequest()))
    #expect(policy.canStore(response(["Expires": HTTPDate.format(t0)]), for: getRequest()))
    #expect(policy.canStore(response(["Cache-Control": "public"], status: 302), for: getRequest()))
    #expect(policy.canStore(response(["Cache-Control": "private"], status: 302), for: getRequest()))
    #expect(policy.canStore(response(["ETag": "\"a\""]), for: getRequest()))
    #expect(policy.canStore(response([:], status: 404), for: getRequest()))
    #expect(!policy.canStore(response([:], status: 302), for: getRequest()))
    #expect(!policy.canStore(response(["ETag": "\"a\""], status: 500), for: getRequest()))
    #expect(policy.canStore(response(["Cache-Control": "max-age=5"], status: 500), for: getRequest()))
  }

  @Test("no-store in the request or the response prevents storing")
  func noStore() {
    #expect(!policy.canStore(response(["Cache-Control": "no-store, max-age=60"]), for: getRequest()))
    #expect(!policy.canStore(response(["Cache-Control": "max-age=60"]), for: getRequest(["Cache-Control": "no-store"])))
    #expect(policy.canStore(response(["Cache-Control": "no-cache"]), for: getRequest()))
  }

  @Test("must-understand stores understood statuses despite no-store, and nothing else")
  func mustUnderstand() {
    #expect(policy.canStore(response(["Cache-Control": "max-age=60, must-understand, no-store"]), for: getRequest()))
    #expect(
      !policy.canStore(
        response(["Cache-Control": "max-age=60, must-understand, no-store"], status: 299), for: getRequest()))
  }

  @Test("only GET is stored, a Range request only as a 206; 304 and 1xx are not")
  func methodsAndStatuses() {
    let fresh = response(["Cache-Control": "max-age=60"])
    #expect(!policy.canStore(fresh, for: HTTPRequest(method: .post, url: exampleURL)))
    #expect(!policy.canStore(fresh, for: HTTPRequest(method: .head, url: exampleURL)))
    #expect(!policy.canStore(fresh, for: getRequest(["Range": "bytes=0-1"])))
    #expect(!policy.canStore(response(["Cache-Control": "max-age=60"], status: 206), for: getRequest()))
    #expect(!policy.canStore(response(["Cache-Control": "max-age=60"], status: 304), for: getRequest()))
    #expect(!policy.canStore(response(["Cache-Control": "max-age=60"], status: 103), for: getRequest()))
  }

  @Test("a 206 is stored when it holds exactly the one byte range its Content-Range states, of a known length")
  func partialContent() {
    func partial(_ contentRange: String?, body: String = "01234") -> HTTPResponse {
      var headers: HTTPHeaders = ["Cache-Control": "max-age=60"]
      if let contentRange { headers.set(contentRange, for: "Content-Range") }
      return HTTPResponse(status: 206, headers: headers, body: Data(body.utf8))
    }
    let range = getRequest(["Range": "bytes=0-4"])
    #expect(policy.canStore(partial("bytes 0-4/10"), for: range))
    #expect(policy.canStore(partial("bytes 5-9/10"), for: getRequest(["Range": "bytes=5-"])))
    #expect(policy.canStore(partial("bytes 0-4/5"), for: range))
    // Not to a request without Range; no Content-Range; an unknown length; another unit; a
    // body that is not the stated range (upstream's partial-store-partial-* scenarios send
    // `bytes 4-9/10`, six bytes, with a five-byte body); several ranges; a range past the end.
    #expect(!policy.canStore(partial("bytes 0-4/10"), for: getRequest()))
    for value in [
      nil, "bytes 0-4/*", "items 0-4/10", "bytes 4-9/10", "bytes 0-4/10, bytes 5-9/10", "bytes 0-4/4", "bytes 4-0/10",
      "bytes -0-4/10", "bytes 0-4",
    ] {
      #expect(!policy.canStore(partial(value), for: range), "\(value ?? "no Content-Range")")
    }
  }

  @Test("Vary: * is never stored (it could never be served)")
  func varyStar() {
    #expect(!policy.canStore(response(["Cache-Control": "max-age=60", "Vary": "Accept, *"]), for: getRequest()))
  }

  @Test("a private cache stores private responses and responses to requests with Authorization")
  func privateCache() {
    let authorized = getRequest(["Authorization": "Bearer t"])
    #expect(policy.canStore(response(["Cache-Control": "private, max-age=60"]), for: getRequest()))
    #expect(policy.canStore(response(["Cache-Control": "max-age=60"]), for: authorized))
  }

  @Test("a shared cache refuses private, and Authorization unless public, must-revalidate or s-maxage")
  func sharedCache() {
    let shared = HTTPCachePolicy.shared
    let authorized = getRequest(["Authorization": "Bearer t"])
    #expect(!shared.canStore(response(["Cache-Control": "private, max-age=60"]), for: getRequest()))
    #expect(!shared.canStore(response(["Cache-Control": "max-age=60"]), for: authorized))
    #expect(shared.canStore(response(["Cache-Control": "public, max-age=60"]), for: authorized))
    #expect(shared.canStore(response(["Cache-Control": "must-revalidate, max-age=60"]), for: authorized))
    #expect(shared.canStore(response(["Cache-Control": "s-maxage=60"]), for: authorized))
    #expect(shared.canStore(response(["Cache-Control": "s-maxage=60"], status: 302), for: getRequest()))
    #expect(!policy.canStore(response(["Cache-Control": "s-maxage=60"], status: 302), for: getRequest()))
  }

  @Test(
    "qualified no-cache fields are not stored and the rest is served fresh; qualified private only in shared caches")
  func qualifiedDirectives() throws {
    let received = response([
      "Cache-Control": #"no-cache="A, b", private="C", max-age=3600"#, "a": "1", "B": "2", "c": "3", "d": "4",
    ])
    let stored = try #require(policy.storedResponse(received, for: getRequest(), requestTime: t0, responseTime: t0))
    #expect(stored.response.headers.fields.map(\.name) == ["Cache-Control", "c", "d"])
    #expect(policy.decision(for: getRequest(), stored: stored, now: t0.plus(10)).servedResponse != nil)
    let shared = try #require(
      HTTPCachePolicy.shared.storedResponse(received, for: getRequest(), requestTime: t0, responseTime: t0))
    #expect(shared.response.headers.fields.map(\.name) == ["Cache-Control", "d"])
  }

  @Test("hop-by-hop fields and those Connection names are not stored; the request's Vary values are")
  func storedForm() throws {
    let request = getRequest(["Accept": "application/json", "Accept-Language": "en"])
    let received = response([
      "Cache-Control": "max-age=60", "Connection": "close, X-Private", "X-Private": "secret", "Keep-Alive": "5",
      "Transfer-Encoding": "chunked", "Vary": "accept, X-Missing", "X-Kept": "1",
    ])
    let stored = try #require(
      policy.storedResponse(received, for: request, requestTime: t0, responseTime: t0.plus(1)))
    #expect(stored.response.headers.fields.map(\.name) == ["Cache-Control", "Vary", "X-Kept"])
    #expect(stored.varyValues == ["accept": "application/json"])
    #expect(stored.varyNames == ["accept", "x-missing"])
    #expect(stored.response.url == exampleURL)
    #expect(stored.requestTime == t0 && stored.responseTime == t0.plus(1))
    #expect(
      policy.storedResponse(response(["Cache-Control": "no-store"]), for: request, requestTime: t0, responseTime: t0)
        == nil)
  }

  @Test("the proxy's own fields are not stored, nor taken from a 304 (RFC 9111 §3.1)")
  func proxyFields() throws {
    let proxyFields: HTTPHeaders = [
      "Proxy-Authenticate": "Basic realm=\"proxy\"", "Proxy-Authentication-Info": "nextnonce=\"a\"",
      "Proxy-Authorization": "Basic YTpi",
    ]
    var received = response(["Cache-Control": "max-age=60", "ETag": "\"v1\"", "X-Kept": "1"])
    for field in proxyFields { received.headers.add(field.value, for: field.name) }
    let stored = try #require(
      policy.storedResponse(received, for: getRequest(), requestTime: t0, responseTime: t0))
    #expect(stored.response.headers.fields.map(\.name) == ["Cache-Control", "ETag", "X-Kept"])
    var notModified = HTTPResponse(status: 304, headers: ["ETag": "\"v1\"", "X-Kept": "2"])
    for field in proxyFields { notModified.headers.add(field.value, for: field.name) }
    let updated = try #require(policy.updating(stored, with: notModified, requestTime: t0, responseTime: t0))
    #expect(updated.response.headers.fields.map(\.name).sorted() == ["Cache-Control", "ETag", "X-Kept"])
    #expect(updated.response.headers["X-Kept"] == "2")
  }
}
