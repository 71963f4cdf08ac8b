import KilnNetwork
import Testing

@Suite("HTTPCacheStatus")
struct HTTPCacheStatusTests {
  @Test("formats and parses RFC 9211 members")
  func roundTrip() throws {
    let status = HTTPCacheStatus(forward: .stale, forwardStatus: 304, ttl: -3, stored: true, detail: "stale-if-error")
    #expect(status.description == "Kiln; fwd=stale; fwd-status=304; ttl=-3; stored; detail=stale-if-error")
    #expect(HTTPCacheStatus(member: status.description) == status)
    #expect(HTTPCacheStatus(member: "Kiln; hit").map(\.hit) == true)
    #expect(HTTPCacheStatus(member: "\"Other\"; fwd=weird; collapsed")?.forward == .miss)
    #expect(HTTPCacheStatus(member: "Kiln; detail=\"two words\"")?.detail == "two words")
    #expect(HTTPCacheStatus(member: "") == nil)
  }

  @Test("a response's cache status is the last member, the cache nearest the client")
  func lastMember() throws {
    let response = HTTPResponse(status: 200, headers: ["Cache-Status": "CDN; hit, Kiln; fwd=uri-miss; stored"])
    let status = try #require(response.cacheStatus)
    #expect(status.cache == "Kiln" && status.forward == .uriMiss && status.stored && !status.hit)
    #expect(!response.isGeneratedByCache)
    #expect(HTTPResponse(status: 200).cacheStatus == nil)
  }
}
