import Foundation
import KilnNetwork
import KilnStorage
import KilnTesting
import Testing
import _KilnSynchronization
import _KilnTestServer

/// `base` behind `cache`: opens the existential the transport kinds hand out.
func cachingTransport(_ base: some Transport, in cache: HTTPCache) -> any Transport {
  base.caching(in: cache)
}

/// The HTTP cache in front of both real transports, against the loopback server. The cache and
/// the server share one manual wall clock (the server stamps `Date` from it), so responses go
/// stale when the test says so, without sleeping.
@Suite("HTTP cache against the loopback server", .timeLimit(.minutes(2)))
struct HTTPCacheServerTests {
  let now = ManualDate(t0)

  func makeCache() -> HTTPCache {
    makeCache(MemoryCache<String, Data>(entryLifetime: nil))
  }

  func makeCache(_ store: some KeyValueStore<String, Data>) -> HTTPCache {
    HTTPCache(store: store, now: now.provider)
  }

  /// Headers with `Date` from the shared clock.
  func headers(_ fields: [(String, String)]) -> [(String, String)] {
    [("Date", HTTPDate.format(now.now))] + fields
  }

  @Test(
    "ETag: a fresh hit asks nothing; a stale one is revalidated with If-None-Match and a 304",
    arguments: TransportKind.allCases)
  func etag(kind: TransportKind) async throws {
    let server = try await TestServer.start { request in
      let fields = self.headers([("Cache-Control", "max-age=10"), ("ETag", "\"v1\"")])
      if request.headers["if-none-match"] == "\"v1\"" { return .status(304, headers: fields) }
      return TestResponse(status: 200, headers: fields, body: Array("version one".utf8))
    }
    try await kind.withTransport { base in
      let transport = cachingTransport(base, in: makeCache())
      let request = HTTPRequest(url: server.url("/etag"))
      let first = try await transport.send(request)
      #expect(first.cacheStatus?.forward == .uriMiss && first.cacheStatus?.stored == true)
      now.advance(by: .seconds(5))
      let hit = try await transport.send(request)
      #expect(hit.cacheStatus?.hit == true && hit.headers["Age"] == "5")
      #expect(server.requestCount(path: "/etag") == 1)
      now.advance(by: .seconds(6))
      let revalidated = try await transport.send(request)
      #expect(revalidated.status == 200 && revalidated.body == Data("version one".utf8))
      #expect(revalidated.cacheStatus?.forwardStatus == 304)
      #expect(server.requestCount(path: "/etag") == 2)
      #expect(server.requests.last?.headers["if-none-match"] == "\"v1\"")
    }
    try await server.stop()
  }

  /// A server that answers `Range` (one `first-last` or `first-` range) with a 206 of
  /// `document`, and the whole with a 200 when `If-Range` does not match its `ETag`.
  func rangeServer(
    _ document: @escaping @Sendable () -> String, etag: @escaping @Sendable () -> String
  ) async throws -> TestServer {
    try await TestServer.start { request in
      let bytes = Array(document().utf8)
      let fields = self.headers([("Cache-Control", "max-age=60"), ("ETag", etag())])
      guard let range = request.headers["range"], request.headers["if-range"].map({ $0 == etag() }) ?? true,
        range.hasPrefix("bytes=")
      else { return TestResponse(status: 200, headers: fields, body: bytes) }
      let parts = range.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
      let first = Int(parts[0])!
      let last = parts[1].isEmpty ? bytes.count - 1 : min(Int(parts[1])!, bytes.count - 1)
      return TestResponse(
        status: 206, headers: fields + [("Content-Range", "bytes \(first)-\(last)/\(bytes.count)")],
        body: Array(bytes[first...last]))
    }
  }

  @Test(
    "a stored 206 answers the ranges it holds; a request for the whole asks for the rest under If-Range and stores one 200",
    arguments: TransportKind.allCases)
  func partialContent(kind: TransportKind) async throws {
    let server = try await rangeServer({ "0123456789" }, etag: { "\"v1\"" })
    try await kind.withTransport { base in
      let transport = cachingTransport(base, in: makeCache())
      let url = server.url("/document")
      let head = try await transport.send(HTTPRequest(url: url, headers: ["Range": "bytes=0-4"]))
      #expect(head.status == 206 && head.body == Data("01234".utf8))
      #expect(head.cacheStatus?.stored == true)
      // Inside what is stored: from the cache.
      let inner = try await transport.send(HTTPRequest(url: url, headers: ["Range": "bytes=1-3"]))
      #expect(inner.status == 206 && inner.body == Data("123".utf8) && inner.headers["Content-Range"] == "bytes 1-3/10")
      #expect(inner.cacheStatus?.hit == true)
      #expect(server.requestCount(path: "/document") == 1)
      // The whole: the cache asks for bytes 5- only, and combines.
      let whole = try await transport.send(HTTPRequest(url: url))
      #expect(whole.status == 200 && whole.body == Data("0123456789".utf8))
      #expect(whole.headers["Content-Range"] == nil)
      #expect(whole.cacheStatus?.stored == true)
      #expect(server.requestCount(path: "/document") == 2)
      #expect(server.requests.last?.headers["range"] == "bytes=5-")
      #expect(server.requests.last?.headers["if-range"] == "\"v1\"")
      // Now the whole representation is stored: any range and the whole come from the cache.
      let again = try await transport.send(HTTPRequest(url: url))
      #expect(again.cacheStatus?.hit == true && again.body == Data("0123456789".utf8))
      let tail = try await transport.send(HTTPRequest(url: url, headers: ["Range": "bytes=7-"]))
      #expect(tail.status == 206 && tail.body == Data("789".utf8) && tail.cacheStatus?.hit == true)
      #expect(server.requestCount(path: "/document") == 2)
    }
    try await server.stop()
  }

  @Test(
    "a representation that changed under a stored 206 is taken whole from the origin's 200, never combined",
    arguments: TransportKind.allCases)
  func partialContentChanged(kind: TransportKind) async throws {
    let version = KilnMutex(("\"v1\"", "0123456789"))
    let server = try await rangeServer({ version.withLock { $0.1 } }, etag: { version.withLock { $0.0 } })
    try await kind.withTransport { base in
      let transport = cachingTransport(base, in: makeCache())
      let url = server.url("/changing")
      _ = try await transport.send(HTTPRequest(url: url, headers: ["Range": "bytes=0-4"]))
      version.withLock { $0 = ("\"v2\"", "abcdefghij") }
      let whole = try await transport.send(HTTPRequest(url: url))
      #expect(whole.status == 200 && whole.body == Data("abcdefghij".utf8), "never 01234fghij")
      #expect(whole.headers["ETag"] == "\"v2\"")
      #expect(server.requestCount(path: "/changing") == 2, "the If-Range miss is answered whole at once")
      // A later range of the whole comes from the new 200, which a 206 does not replace.
      let range = try await transport.send(HTTPRequest(url: url, headers: ["Range": "bytes=0-1"]))
      #expect(range.cacheStatus?.hit == true && range.headers["ETag"] == "\"v2\"")
      // A Range request the cache forwards (If-Range) brings a 206 back: the stored 200 stays.
      let forwarded = try await transport.send(
        HTTPRequest(url: url, headers: ["Range": "bytes=2-3", "If-Range": "\"v2\""]))
      #expect(forwarded.status == 206 && forwarded.body == Data("cd".utf8))
      #expect(server.requestCount(path: "/changing") == 3)
      let stillWhole = try await transport.send(HTTPRequest(url: url))
      #expect(stillWhole.cacheStatus?.hit == true && stillWhole.body == Data("abcdefghij".utf8))
      #expect(server.requestCount(path: "/changing") == 3)
    }
    try await server.stop()
  }

  @Test(
    "a POST answered with its own URL's representation (Content-Location, explicit freshness) answers later GETs",
    arguments: TransportKind.allCases)
  func postResponseAnswersGet(kind: TransportKind) async throws {
    let server = try await TestServer.start { request in
      var fields = self.headers([("Cache-Control", "max-age=60")])
      switch request.path {
      case "/note": fields.append(("Content-Location", "/note"))
      case "/elsewhere": fields.append(("Content-Location", "/note"))
      default: break  // /plain: no Content-Location
      }
      return TestResponse(status: 200, headers: fields, body: Array("\(request.method) \(request.path)".utf8))
    }
    try await kind.withTransport { base in
      let transport = cachingTransport(base, in: makeCache())
      // /note last: the POST to /elsewhere invalidates /note, its Content-Location.
      for path in ["/elsewhere", "/plain", "/note"] {
        let post = HTTPRequest(
          method: .post, url: server.url(path), headers: ["Content-Type": "text/plain"], body: .data(Data("1".utf8)))
        let posted = try await transport.send(post)
        #expect(posted.cacheStatus?.stored == (path == "/note"), "\(path)")
      }
      let get = try await transport.send(HTTPRequest(url: server.url("/note")))
      #expect(get.cacheStatus?.hit == true && get.body == Data("POST /note".utf8))
      #expect(server.requestCount(path: "/note") == 1)
      // Content-Location naming another URL, or none: nothing stored for the GET.
      let elsewhere = try await transport.send(HTTPRequest(url: server.url("/elsewhere")))
      #expect(elsewhere.cacheStatus?.hit != true && elsewhere.body == Data("GET /elsewhere".utf8))
      let plain = try await transport.send(HTTPRequest(url: server.url("/plain")))
      #expect(plain.cacheStatus?.hit != true && plain.body == Data("GET /plain".utf8))
    }
    try await server.stop()
  }

  @Test("Last-Modified: heuristic freshness, then If-Modified-Since and a 304", arguments: TransportKind.allCases)
  func lastModified(kind: TransportKind) async throws {
    let modified = HTTPDate.format(t0.plus(-1000))
    let server = try await TestServer.start { request in
      let fields = self.headers([("Last-Modified", modified)])
      if request.headers["if-modified-since"] == modified { return .status(304, headers: fields) }
      return TestResponse(status: 200, headers: fields, body: Array("dated".utf8))
    }
    try await kind.withTransport { base in
      let transport = cachingTransport(base, in: makeCache())
      let request = HTTPRequest(url: server.url("/dated"))
      _ = try await transport.send(request)
      now.advance(by: .seconds(90))  // 10 % of 1000 s: fresh for 100 s
      #expect(try await transport.send(request).cacheStatus?.hit == true)
      now.advance(by: .seconds(20))
      let revalidated = try await transport.send(request)
      #expect(revalidated.body == Data("dated".utf8) && revalidated.cacheStatus?.forwardStatus == 304)
      #expect(server.requestCount(path: "/dated") == 2)
    }
    try await server.stop()
  }

  @Test("Vary: one request per variant, each served only to matching requests", arguments: TransportKind.allCases)
  func vary(kind: TransportKind) async throws {
    let server = try await TestServer.start { request in
      TestResponse(
        status: 200, headers: self.headers([("Cache-Control", "max-age=60"), ("Vary", "Accept-Language")]),
        body: Array((request.headers["accept-language"] ?? "none").utf8))
    }
    try await kind.withTransport { base in
      let transport = cachingTransport(base, in: makeCache())
      for language in ["en", "fr", "en", "fr", "en"] {
        let response = try await transport.send(
          HTTPRequest(url: server.url("/vary"), headers: ["Accept-Language": language]))
        #expect(response.body == Data(language.utf8))
      }
      #expect(server.requestCount(path: "/vary") == 2)
    }
    try await server.stop()
  }

  @Test(
    "stale-while-revalidate: every caller gets the stale response at once; one background request",
    arguments: TransportKind.allCases)
  func staleWhileRevalidate(kind: TransportKind) async throws {
    let gate = Gate()
    let version = AsyncCounter(1)
    let server = try await TestServer.start { request in
      if request.headers["if-none-match"] != nil { try? await gate.wait() }
      let current = version.value
      return TestResponse(
        status: 200,
        headers: self.headers([("Cache-Control", "max-age=1, stale-while-revalidate=60"), ("ETag", "\"v\(current)\"")]),
        body: Array("v\(current)".utf8))
    }
    try await kind.withTransport { base in
      let cache = makeCache()
      let transport = cachingTransport(base, in: cache)
      let request = HTTPRequest(url: server.url("/swr"))
      _ = try await transport.send(request)
      version.increment()
      now.advance(by: .seconds(10))
      let responses = try await withThrowingTaskGroup(of: HTTPResponse.self) { group in
        for _ in 0..<16 { group.addTask { try await transport.send(request) } }
        return try await group.reduce(into: [HTTPResponse]()) { $0.append($1) }
      }
      #expect(responses.allSatisfy { $0.body == Data("v1".utf8) && $0.cacheStatus?.hit == true })
      await gate.waitForWaiters(1)
      #expect(server.requestCount(path: "/swr") == 2)
      gate.open()
      await cache.waitForRevalidations()
      #expect(server.requestCount(path: "/swr") == 2)
      let refreshed = try await transport.send(request)
      #expect(refreshed.body == Data("v2".utf8) && refreshed.cacheStatus?.hit == true)
    }
    try await server.stop()
  }

  @Test(
    "stale-if-error: a dropped connection or a 503 serves stale; must-revalidate gets a generated 504",
    arguments: TransportKind.allCases)
  func staleIfError(kind: TransportKind) async throws {
    let failing = AsyncCounter(0)
    let server = try await TestServer.start { request in
      if failing.value == 1 { return .closeConnection }
      if failing.value == 2 { return .status(503, headers: self.headers([])) }
      let control =
        request.path == "/strict" ? "max-age=1, must-revalidate, stale-if-error=60" : "max-age=1, stale-if-error=60"
      return TestResponse(status: 200, headers: self.headers([("Cache-Control", control)]), body: Array("kept".utf8))
    }
    try await kind.withTransport { base in
      let transport = cachingTransport(base, in: makeCache())
      let lenient = HTTPRequest(url: server.url("/lenient"))
      let strict = HTTPRequest(url: server.url("/strict"))
      _ = try await transport.send(lenient)
      _ = try await transport.send(strict)
      now.advance(by: .seconds(30))
      failing.add(1)  // drop every connection
      let dropped = try await transport.send(lenient)
      #expect(dropped.status == 200 && dropped.body == Data("kept".utf8))
      #expect(dropped.cacheStatus?.detail == "stale-if-error")
      let generated = try await transport.send(strict)
      #expect(generated.status == 504 && generated.isGeneratedByCache)
      failing.add(1)  // answer 503
      let unavailable = try await transport.send(lenient)
      #expect(unavailable.status == 200 && unavailable.cacheStatus?.forwardStatus == 503)
      #expect(try await transport.send(strict).status == 503)
      now.advance(by: .seconds(60))
      #expect(try await transport.send(lenient).status == 503)
    }
    try await server.stop()
  }

  @Test("a successful POST invalidates the stored GET; a failed POST does not", arguments: TransportKind.allCases)
  func invalidation(kind: TransportKind) async throws {
    let postStatus = AsyncCounter(500)
    let server = try await TestServer.start { request in
      if request.method == "POST" { return .status(postStatus.value, headers: [("Location", "/items/1")]) }
      return TestResponse(
        status: 200, headers: self.headers([("Cache-Control", "max-age=600")]), body: Array("list".utf8))
    }
    try await kind.withTransport { base in
      let transport = cachingTransport(base, in: makeCache())
      let list = HTTPRequest(url: server.url("/items"))
      let item = HTTPRequest(url: server.url("/items/1"))
      _ = try await transport.send(list)
      _ = try await transport.send(item)
      let post = HTTPRequest(method: .post, url: server.url("/items"), body: .data(Data("{}".utf8)))
      #expect(try await transport.send(post).status == 500)
      #expect(try await transport.send(list).cacheStatus?.hit == true)
      postStatus.add(201 - 500)
      #expect(try await transport.send(post).status == 201)
      #expect(try await transport.send(list).cacheStatus?.forward == .uriMiss)
      #expect(try await transport.send(item).cacheStatus?.forward == .uriMiss)
      #expect(server.requestCount(path: "/items") == 4)
    }
    try await server.stop()
  }

  @Test(
    "a DiskCache keeps responses across cache instances; a corrupt file is a miss", arguments: TransportKind.allCases)
  func diskCache(kind: TransportKind) async throws {
    let server = try await TestServer.start { _ in
      TestResponse(status: 200, headers: self.headers([("Cache-Control", "max-age=600")]), body: Array("disk".utf8))
    }
    try await withTemporaryDirectory { directory in
      try await kind.withTransport { base in
        let request = HTTPRequest(url: server.url("/disk"))
        _ = try await cachingTransport(base, in: makeCache(try DiskCache<String, Data>(directory: directory))).send(
          request)
        let reopened = cachingTransport(base, in: makeCache(try DiskCache<String, Data>(directory: directory)))
        let hit = try await reopened.send(request)
        #expect(hit.cacheStatus?.hit == true && hit.body == Data("disk".utf8))
        #expect(server.requestCount(path: "/disk") == 1)
        let store = try DiskCache<String, Data>(directory: directory)
        try await store.setValue(Data("garbage".utf8), forKey: HTTPCache.key(for: request.url), expiresAt: nil)
        let afterCorruption = try await cachingTransport(base, in: makeCache(store)).send(request)
        #expect(afterCorruption.cacheStatus?.forward == .uriMiss)
        #expect(server.requestCount(path: "/disk") == 2)
      }
    }
    try await server.stop()
  }
}
