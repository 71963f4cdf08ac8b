import Foundation
import KilnNetwork
import KilnTesting
import Testing

@Suite("HTTPCache")
struct HTTPCacheTests {
  let store = SpyKeyValueStore<String, Data>()
  let now = ManualDate(t0)

  func makeCache(policy: HTTPCachePolicy = .private, maximumVariants: Int = 8) -> HTTPCache {
    HTTPCache(store: store, policy: policy, maximumVariants: maximumVariants, now: now.provider)
  }

  @Test("a stored response reads back equal, keyed by URL without fragment, with no expiry of the store")
  func roundTrip() async throws {
    let cache = makeCache()
    let stored = storedResponse(["Cache-Control": "max-age=60", "ETag": "\"é\"", "X-Empty": ""], body: "héllo")
    await cache.store(stored, for: getRequest())
    let fragment = URL(string: exampleURL.absoluteString + "#top")!
    #expect(await cache.storedResponses(for: fragment) == [stored])
    #expect(await cache.storedResponse(for: getRequest()) == stored)
    #expect(store.entries.keys.sorted() == [exampleURL.absoluteString])
    #expect(store.entries.values.first?.expiresAt == .distantFuture)
    #expect(HTTPCache.key(for: fragment) == exampleURL.absoluteString)
  }

  @Test("decision reads the store and judges at the cache's clock")
  func decision() async throws {
    let cache = makeCache()
    await cache.store(storedResponse(["Cache-Control": "max-age=60"]), for: getRequest())
    #expect(await cache.decision(for: getRequest()).servedResponse?.headers["Age"] == "0")
    now.advance(by: .seconds(60))
    #expect(await cache.decision(for: getRequest()).forwardReason == .stale)
    #expect(await cache.decision(for: getRequest(url: URL(string: "https://x.example/")!)).forwardReason == .uriMiss)
  }

  @Test(
    "a corrupt stored entry is a miss and is removed",
    arguments: [
      Data(), Data("not a cache entry".utf8), Data([0x4B, 0x48, 0x43, 0x01]),
      Data([0x4B, 0x48, 0x43, 0x02, 0, 0, 0, 0]),
    ])
  func corrupt(bytes: Data) async throws {
    let cache = makeCache()
    try await store.setValue(bytes, forKey: exampleURL.absoluteString, expiresAt: nil)
    #expect(await cache.storedResponses(for: exampleURL).isEmpty)
    #expect(store.entries.isEmpty)
    #expect(await cache.decision(for: getRequest()).forwardReason == .uriMiss)
  }

  @Test("a truncated or extended entry is corrupt at every length")
  func truncated() async throws {
    let cache = makeCache()
    let request = getRequest(["Accept": "a"])
    await cache.store(
      storedResponse(["Cache-Control": "max-age=60", "Vary": "Accept"], request: request), for: request)
    let valid = try #require(store.entries[exampleURL.absoluteString]?.value)
    for length in stride(from: 0, to: valid.count, by: 7) {
      try await store.setValue(valid.prefix(length), forKey: exampleURL.absoluteString, expiresAt: nil)
      #expect(await cache.storedResponses(for: exampleURL).isEmpty, "length \(length)")
    }
    try await store.setValue(valid + Data([0]), forKey: exampleURL.absoluteString, expiresAt: nil)
    #expect(await cache.storedResponses(for: exampleURL).isEmpty)
    #expect(store.entries.isEmpty)
  }

  @Test("a store that cannot be read is a miss, one that cannot be written stores nothing")
  func failingStore() async throws {
    let cache = makeCache()
    store.failReads(with: TestError("read"))
    #expect(await cache.storedResponses(for: exampleURL).isEmpty)
    store.failReads(with: nil)
    store.failWrites(with: TestError("write"))
    await cache.store(storedResponse(["Cache-Control": "max-age=60"]), for: getRequest())
    store.failWrites(with: nil)
    #expect(await cache.storedResponses(for: exampleURL).isEmpty)
  }

  @Test("Vary variants are kept side by side, newest first; the same variant is replaced")
  func variants() async throws {
    let cache = makeCache(maximumVariants: 2)
    func variant(_ language: String, body: String) -> (HTTPRequest, StoredHTTPResponse) {
      let request = getRequest(["Accept-Language": language])
      return (
        request,
        storedResponse(["Cache-Control": "max-age=60", "Vary": "Accept-Language"], body: body, request: request)
      )
    }
    let (en, english) = variant("en", body: "hello")
    let (fr, french) = variant("fr", body: "bonjour")
    let (_, english2) = variant("en", body: "hello again")
    let (de, german) = variant("de", body: "hallo")
    await cache.store(english, for: en)
    await cache.store(french, for: fr)
    #expect(await cache.storedResponse(for: en) == english)
    #expect(await cache.storedResponse(for: fr) == french)
    await cache.store(english2, for: en)
    #expect(await cache.storedResponses(for: exampleURL) == [english2, french])
    await cache.store(german, for: de)
    #expect(await cache.storedResponses(for: exampleURL) == [german, english2])
    #expect(await cache.storedResponse(for: getRequest(["Accept-Language": "it"])) == nil)
    #expect(await cache.decision(for: getRequest(["Accept-Language": "it"])).forwardReason == .varyMiss)
  }

  @Test("invalidate removes a URL; removeAll removes everything")
  func removal() async throws {
    let cache = makeCache()
    let other = URL(string: "https://api.example.com/other")!
    await cache.store(storedResponse(["Cache-Control": "max-age=60"]), for: getRequest())
    await cache.store(storedResponse(["Cache-Control": "max-age=60"]), for: getRequest(url: other))
    await cache.invalidate(exampleURL)
    #expect(await cache.storedResponses(for: exampleURL).isEmpty)
    #expect(await cache.storedResponses(for: other).count == 1)
    try await cache.removeAll()
    #expect(store.entries.isEmpty)
  }
}
