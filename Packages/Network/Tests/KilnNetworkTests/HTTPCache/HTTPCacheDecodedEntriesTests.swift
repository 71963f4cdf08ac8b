import Foundation
import KilnStorage
import KilnTesting
import Testing

@testable import KilnNetwork

/// The decoded entries an `HTTPCache` keeps beside its store's bytes: a hit is a lookup, and
/// the store stays the source of truth.
@Suite("HTTPCache decoded entries")
struct HTTPCacheDecodedEntriesTests {
  let store = SpyKeyValueStore<String, Data>()
  let now = ManualDate(t0)

  func makeCache(over store: SpyKeyValueStore<String, Data>? = nil) -> HTTPCache {
    HTTPCache(store: store ?? self.store, now: now.provider)
  }

  @Test("a response read after it was stored, or read again, is not decoded again and reads back equal")
  func reuse() async throws {
    let cache = makeCache()
    let stored = storedResponse(["Cache-Control": "max-age=60", "ETag": "\"v1\""], body: "one")
    await cache.store(stored, for: getRequest())
    #expect(await cache.storedResponses(for: exampleURL) == [stored])
    #expect(await cache.storedResponses(for: exampleURL) == [stored])
    #expect(cache.decoded.reuseCount == 2)
    // What the cache kept is what decoding the store's bytes gives.
    let bytes = try #require(store.entries[exampleURL.absoluteString]?.value)
    #expect(try StoredResponseCodec.decode(bytes) == [stored])
    #expect(await cache.decision(for: getRequest()).servedResponse?.body == Data("one".utf8))
  }

  @Test("another writer of the same store (a second process) is seen at once")
  func anotherWriter() async throws {
    let reader = makeCache()
    let writer = makeCache()
    await writer.store(storedResponse(["Cache-Control": "max-age=60"], body: "one"), for: getRequest())
    #expect(await reader.storedResponse(for: getRequest())?.response.body == Data("one".utf8))
    await writer.store(storedResponse(["Cache-Control": "max-age=60"], body: "two"), for: getRequest())
    #expect(await reader.storedResponse(for: getRequest())?.response.body == Data("two".utf8))
    #expect(reader.decoded.reuseCount == 0)
  }

  @Test("an entry the store dropped (evicted, expired, removed by another process) is a miss")
  func droppedByTheStore() async throws {
    let cache = makeCache()
    await cache.store(storedResponse(["Cache-Control": "max-age=60"]), for: getRequest())
    try await store.removeValue(forKey: exampleURL.absoluteString)
    #expect(await cache.storedResponses(for: exampleURL).isEmpty)
    #expect(await cache.decision(for: getRequest()).forwardReason == .uriMiss)
  }

  @Test("bytes corrupted behind the cache's back are a miss and are removed, whatever was kept")
  func corruptedBehindItsBack() async throws {
    let cache = makeCache()
    await cache.store(storedResponse(["Cache-Control": "max-age=60"]), for: getRequest())
    try await store.setValue(Data("garbage".utf8), forKey: exampleURL.absoluteString, expiresAt: nil)
    #expect(await cache.storedResponses(for: exampleURL).isEmpty)
    #expect(store.entries.isEmpty)
    #expect(cache.decoded.count == 0)
  }

  @Test("at most 512 entries are kept, the oldest dropped first; one over 256 KB is not kept")
  func bounded() async throws {
    let cache = makeCache()
    func url(_ n: Int) -> URL { URL(string: "https://api.example.com/items/\(n)")! }
    for n in 0..<600 {
      await cache.store(storedResponse(["Cache-Control": "max-age=60"]), for: getRequest(url: url(n)))
    }
    #expect(cache.decoded.count == DecodedEntries.capacity)
    _ = await cache.storedResponses(for: url(599))
    #expect(cache.decoded.reuseCount == 1)
    _ = await cache.storedResponses(for: url(0))  // dropped: decoded again, and kept again
    #expect(cache.decoded.reuseCount == 1)
    #expect(cache.decoded.count == DecodedEntries.capacity)

    let large = String(repeating: "x", count: DecodedEntries.largestEntry)
    let big = URL(string: "https://api.example.com/big")!
    await cache.store(storedResponse(["Cache-Control": "max-age=60"], body: large), for: getRequest(url: big))
    #expect(await cache.storedResponses(for: big).first?.response.body.count == large.utf8.count)
    #expect(cache.decoded.reuseCount == 1)
  }

  @Test("invalidate and removeAll drop what was kept")
  func invalidation() async throws {
    let cache = makeCache()
    await cache.store(storedResponse(["Cache-Control": "max-age=60"]), for: getRequest())
    await cache.invalidate(exampleURL)
    #expect(cache.decoded.count == 0)
    await cache.store(storedResponse(["Cache-Control": "max-age=60"]), for: getRequest())
    try await cache.removeAll()
    #expect(cache.decoded.count == 0)
    #expect(await cache.storedResponses(for: exampleURL).isEmpty)
  }

  @Test("over a disk cache, whose reads are fresh bytes each time: equal bytes are reused, a rewrite is seen")
  func diskCache() async throws {
    try await withTemporaryDirectory { directory in
      let cache = HTTPCache(store: try DiskCache<String, Data>(directory: directory), now: now.provider)
      await cache.store(storedResponse(["Cache-Control": "max-age=60"], body: "one"), for: getRequest())
      #expect(await cache.storedResponse(for: getRequest())?.response.body == Data("one".utf8))
      #expect(cache.decoded.reuseCount == 1)
      // A second process writing the same folder.
      let other = HTTPCache(store: try DiskCache<String, Data>(directory: directory), now: now.provider)
      await other.store(storedResponse(["Cache-Control": "max-age=60"], body: "two"), for: getRequest())
      #expect(await cache.storedResponse(for: getRequest())?.response.body == Data("two".utf8))
      #expect(cache.decoded.reuseCount == 1)
    }
  }

  @Test("a copy of a stored response is the same value, and its fields read as given")
  func storedResponseBox() {
    let stored = storedResponse(
      ["Cache-Control": "max-age=60", "ETag": "\"v1\"", "Vary": "Accept", "Age": "5"],
      request: getRequest(["Accept": "text/html"]))
    let copy = stored
    #expect(copy == stored)
    #expect(copy.hashValue == stored.hashValue)
    #expect(copy.entityTag == "\"v1\"")
    #expect(copy.ageValue == 5)
    #expect(copy.varyNames == ["accept"])
    #expect(copy.varyValues == ["accept": "text/html"])
    #expect(copy.cacheControl.maxAge == 60)
    let other = storedResponse(["Cache-Control": "max-age=60", "ETag": "\"v2\""])
    #expect(other != stored)
  }
}
