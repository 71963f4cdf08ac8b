import Foundation
import KilnTesting
import Testing

@testable import KilnNetwork

/// Targeted cache-control fields (RFC 9213): `CDN-Cache-Control`, or a field of the gateway's
/// own, replace `Cache-Control` and `Expires` in a shared cache, and only there.
@Suite("HTTPCachePolicy targeted fields (RFC 9213)")
struct HTTPCachePolicyTargetedTests {
  let shared = HTTPCachePolicy.shared

  func response(_ headers: HTTPHeaders) -> HTTPResponse {
    var headers = headers
    if !headers.contains("Date") { headers.set(HTTPDate.format(t0), for: "Date") }
    return HTTPResponse(status: 200, headers: headers, body: Data("x".utf8))
  }

  func stored(_ headers: HTTPHeaders, policy: HTTPCachePolicy) -> StoredHTTPResponse? {
    policy.storedResponse(response(headers), for: getRequest(), requestTime: t0, responseTime: t0)
  }

  @Test("a shared cache stores and keeps what CDN-Cache-Control says, whatever Cache-Control says")
  func targetedWins() throws {
    let headers: HTTPHeaders = ["Cache-Control": "no-store", "CDN-Cache-Control": "max-age=600"]
    let kept = try #require(stored(headers, policy: shared))
    #expect(shared.freshnessLifetime(of: kept) == 600)
    #expect(stored(headers, policy: .private) == nil)

    let refused: HTTPHeaders = ["Cache-Control": "max-age=600", "CDN-Cache-Control": "no-store"]
    #expect(stored(refused, policy: shared) == nil)
    #expect(stored(refused, policy: .private).map(HTTPCachePolicy.private.freshnessLifetime(of:)) == 600)
  }

  @Test("with a targeted field, Expires is ignored; without a valid one, Cache-Control and Expires count")
  func expiresIgnored() throws {
    let expires = HTTPDate.format(t0.plus(3_600))
    let targeted = try #require(stored(["Expires": expires, "CDN-Cache-Control": "must-revalidate"], policy: shared))
    #expect(shared.freshnessLifetime(of: targeted) == 0)
    #expect(shared.forbidsStale(targeted))
    let plain = try #require(stored(["Expires": expires, "Cache-Control": "public"], policy: shared))
    #expect(shared.freshnessLifetime(of: plain) == 3_600)
  }

  @Test(
    "an empty or invalid targeted field falls back to Cache-Control",
    arguments: [
      "", "Max-Age=60", "max-age=60;", "max-age=\"unterminated", "max-age=1.2.3", "max age", "max-age=@",
      "max-age =100", "max-age= 100", "max-age=100, &&&&&", "max-age=\"100\"", "max-age=1.5", "max-age",
      "max-age=100, no-store=5", "max-age=100, private=7", "max-age=100,", "max-age=100,, public",
      ", max-age=100", "max-age=(100)",
    ])
  func invalidFallsBack(value: String) throws {
    let kept = try #require(stored(["Cache-Control": "max-age=30", "CDN-Cache-Control": value], policy: shared))
    #expect(shared.freshnessLifetime(of: kept) == 30)
  }

  @Test("members are a structured dictionary: parameters ignored, ?0 absent, ?1 present, strings unquoted")
  func structuredDictionary() throws {
    let directives = try #require(
      CacheControl(targeted: ["max-age=60;note=\"a;b\", no-store=?0", "must-revalidate=?1, no-cache=\"set-cookie\""]))
    #expect(directives.maxAge == 60)
    #expect(!directives.noStore)
    #expect(directives.mustRevalidate)
    #expect(directives.noCacheFields == ["set-cookie"])
    #expect(CacheControl(targeted: []) == nil)
    #expect(CacheControl(targeted: [" "]) == nil)
  }

  @Test("a key given again overwrites the earlier value, across lines too; ?0 removes; an inner list is valid")
  func lastValueWins() throws {
    #expect(CacheControl(targeted: ["max-age=600, max-age=0"])?.maxAge == 0)
    #expect(CacheControl(targeted: ["max-age=600", "max-age=0"])?.maxAge == 0)
    #expect(CacheControl(targeted: ["no-store, no-store=?0, max-age=5"])?.noStore == false)
    #expect(CacheControl(targeted: ["no-store=?0, no-store"])?.noStore == true)
    #expect(CacheControl(targeted: ["x-ext=(a b), max-age=5"])?.maxAge == 5)
  }

  @Test("a configured field not named *-Cache-Control is obeyed when storing and when serving")
  func otherFieldName() throws {
    var policy = HTTPCachePolicy.shared
    policy.targetedFields = ["Surrogate-Control"]
    let headers: HTTPHeaders = ["Cache-Control": "no-store", "Surrogate-Control": "max-age=60, must-revalidate"]
    let kept = try #require(stored(headers, policy: policy))
    #expect(policy.freshnessLifetime(of: kept) == 60)
    #expect(policy.forbidsStale(kept))
  }

  @Test("a large number, an extension and a negative age are read as in Cache-Control")
  func lenientValues() throws {
    #expect(CacheControl(targeted: ["max-age=99999999999"])?.maxAge == CacheControl.maximumDeltaSeconds)
    #expect(CacheControl(targeted: ["foobar, max-age=3600"])?.maxAge == 3_600)
    #expect(CacheControl(targeted: ["max-age=-1"])?.maxAge == 0)
    #expect(CacheControl(targeted: ["private=\"set-cookie\", no-store"])?.privateFields == ["set-cookie"])
  }

  @Test("a gateway's own field, listed first, wins over CDN-Cache-Control; a missing one passes to the next")
  func configurableField() throws {
    var gateway = HTTPCachePolicy.shared
    gateway.targetedFields = ["Gateway-Cache-Control", "CDN-Cache-Control"]
    let both: HTTPHeaders = [
      "Cache-Control": "max-age=10", "CDN-Cache-Control": "max-age=20", "gateway-cache-control": "max-age=30",
    ]
    #expect(gateway.freshnessLifetime(of: try #require(stored(both, policy: gateway))) == 30)
    #expect(shared.freshnessLifetime(of: try #require(stored(both, policy: shared))) == 20)
    let cdnOnly: HTTPHeaders = ["Cache-Control": "max-age=10", "CDN-Cache-Control": "max-age=20"]
    #expect(gateway.freshnessLifetime(of: try #require(stored(cdnOnly, policy: gateway))) == 20)
    var none = HTTPCachePolicy.shared
    none.targetedFields = []
    #expect(none.freshnessLifetime(of: try #require(stored(both, policy: none))) == 10)
  }

  @Test("the decision follows the targeted field: fresh by it, no-cache by it, stale-while-revalidate by it")
  func decisions() throws {
    let fresh = try #require(stored(["Cache-Control": "no-cache", "CDN-Cache-Control": "max-age=60"], policy: shared))
    #expect(shared.decision(for: getRequest(), stored: fresh, now: t0.plus(30)).servedResponse != nil)
    #expect(
      HTTPCachePolicy.private.decision(for: getRequest(), stored: fresh, now: t0.plus(30)).forwardReason == .stale)

    let validate = try #require(
      stored(["Cache-Control": "max-age=60", "CDN-Cache-Control": "no-cache, max-age=60"], policy: shared))
    #expect(shared.decision(for: getRequest(), stored: validate, now: t0.plus(30)).forwardReason == .stale)

    let revalidate = try #require(
      stored(
        ["Cache-Control": "max-age=1", "CDN-Cache-Control": "max-age=1, stale-while-revalidate=60"], policy: shared))
    #expect(shared.decision(for: getRequest(), stored: revalidate, now: t0.plus(30)).isServeStale)
  }

  @Test("a shared HTTPCache over a store applies the targeted field end to end")
  func throughTheCache() async throws {
    let origin = StubTransport(replies: [
      .status(
        200, headers: ["Cache-Control": "private", "CDN-Cache-Control": "public, max-age=60"], body: Data("a".utf8))
    ])
    let cache = HTTPCache(store: SpyKeyValueStore<String, Data>(), policy: .shared)
    let transport = origin.caching(in: cache)
    _ = try await transport.send(getRequest())
    let second = try await transport.send(getRequest())
    #expect(second.cacheStatus?.hit == true)
    #expect(origin.requestCount == 1)
  }
}
