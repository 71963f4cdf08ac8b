import Foundation
import KilnCore
import KilnNetwork
import KilnStorage
import KilnTesting
import Testing
import _KilnSynchronization
import _KilnTestServer

/// A `GET` of one path.
private struct URLTarget: TargetGroup {
  var baseURL: URL
  var path: String
  var method: HTTPMethod { .get }
  var task: NetworkTask { .plain }
}

@Suite("Counters of the HTTP cache and the request pipeline", .timeLimit(.minutes(2)))
struct CountersTests {
  @Test("the HTTP cache counts each way a request is answered, over loopback", arguments: TransportKind.allCases)
  func httpCacheLookups(kind: TransportKind) async throws {
    let date = ManualDate()
    let server = try await TestServer.start { request in
      if request.path == "/cold" { return .status(200) }
      if request.method == "POST" { return .status(204) }
      if request.headers["if-none-match"] == "\"v1\"" {
        return TestResponse(status: 304, headers: [("ETag", "\"v1\""), ("Cache-Control", "max-age=10")])
      }
      return TestResponse(
        status: 200, headers: [("Cache-Control", "max-age=10"), ("ETag", "\"v1\""), ("Content-Type", "text/plain")],
        body: Array("article".utf8))
    }
    try await kind.withTransport { transport in
      let cache = HTTPCache(store: MemoryCache<String, Data>(entryLifetime: nil), now: date.provider)
      let chain = RequestChain(transport: transport, middleware: [HTTPCaching(cache)])
      let url = server.url("/article")
      _ = try await chain.send(HTTPRequest(url: url))  // miss, stored
      _ = try await chain.send(HTTPRequest(url: url))  // hit
      date.advance(by: .seconds(20))
      _ = try await chain.send(HTTPRequest(url: url))  // expired: revalidated, 304, stored again
      _ = try await chain.send(HTTPRequest(url: url, headers: ["Cache-Control": "no-cache"]))  // request
      _ = try await chain.send(HTTPRequest(method: .post, url: url))  // bypass, invalidates
      _ = try await chain.send(HTTPRequest(url: url))  // miss again
      let generated = try await chain.send(
        HTTPRequest(url: server.url("/cold"), headers: ["Cache-Control": "only-if-cached"]))
      #expect(generated.status == 504)

      let statistics = cache.statistics
      #expect(statistics.hits == 1)
      #expect(statistics.misses == 2)
      #expect(statistics.expired == 1)
      #expect(statistics.requestForwards == 1)
      #expect(statistics.bypassed == 1)
      #expect(statistics.generated == 1)
      #expect(statistics.revalidatedNotModified == 2)  // the expired one, and no-cache's conditional
      #expect(statistics.revalidatedReplaced == 0)
      #expect(statistics.invalidations == 1)
      #expect(statistics.stores == 4)
      #expect(statistics.storedBytes > 4 * 7)
      #expect(statistics.corruptEntries == 0)
      #expect(server.requests.count == 5)

      let readings = cache.counterReadings()
      #expect(counterValue(readings, "kiln_http_cache_lookups_total", [("result", "hit")]) == 1)
      #expect(counterValue(readings, "kiln_http_cache_lookups_total", [("result", "miss")]) == 2)
      #expect(counterValue(readings, "kiln_http_cache_revalidations_total", [("outcome", "not_modified")]) == 2)
      #expect(counterValue(readings, "kiln_http_cache_stored_bytes_total") == statistics.storedBytes)
      #expect(counterValue(readings, "kiln_http_cache_revalidations_in_flight") == 0)
      // Every lookup counts once: seven requests, seven lookups.
      let lookups = readings.filter { $0.name == "kiln_http_cache_lookups_total" }.map(\.value).reduce(0, +)
      #expect(lookups == 7)
    }
    try await server.stop()
  }

  @Test("stale-while-revalidate, stale-if-error, a new representation and a corrupt entry are counted")
  func httpCacheStale() async throws {
    let date = ManualDate()
    let failing = KilnMutex(false)
    let version = KilnMutex(1)
    let server = try await TestServer.start { request in
      if failing.withLock({ $0 }) { return .status(500) }
      let current = version.withLock { $0 }
      return TestResponse(
        status: 200,
        headers: [
          ("Cache-Control", "max-age=10, stale-while-revalidate=30, stale-if-error=600"), ("ETag", "\"v\(current)\""),
        ],
        body: Array("v\(current)".utf8))
    }
    let store = MemoryCache<String, Data>(entryLifetime: nil)
    let cache = HTTPCache(store: store, now: date.provider)
    let chain = RequestChain(transport: URLSessionTransport(), middleware: [HTTPCaching(cache)])
    let url = server.url("/feed")
    _ = try await chain.send(HTTPRequest(url: url))  // miss
    version.withLock { $0 = 2 }
    date.advance(by: .seconds(15))
    let stale = try await chain.send(HTTPRequest(url: url))  // stale hit, background revalidation
    #expect(String(decoding: stale.body, as: UTF8.self) == "v1")
    await cache.waitForRevalidations()
    #expect(cache.statistics.staleHits == 1)
    #expect(cache.statistics.revalidatedReplaced == 1)

    failing.withLock { $0 = true }
    date.advance(by: .seconds(100))
    let rescued = try await chain.send(HTTPRequest(url: url))  // expired, 500: stale-if-error
    #expect(String(decoding: rescued.body, as: UTF8.self) == "v2")
    #expect(cache.statistics.expired == 1)
    #expect(cache.statistics.staleIfError == 1)
    #expect(cache.statistics.revalidatedReplaced == 1)
    #expect(cache.statistics.revalidationFailures == 1)  // a 500 to a conditional request replaces nothing

    store.setValue(Data("not an entry".utf8), forKey: HTTPCache.key(for: url), expiresAt: .distantFuture)
    failing.withLock { $0 = false }
    _ = try await chain.send(HTTPRequest(url: url))
    #expect(cache.statistics.corruptEntries == 1)
    #expect(cache.statistics.misses == 2)
    try await server.stop()
  }

  @Test("a chain counts requests, responses by class, attempts, retries by reason and bytes, over loopback")
  func chainCounters() async throws {
    let calls = KilnMutex(0)
    let server = try await TestServer.start { request in
      let call = calls.withLock {
        $0 += 1
        return $0
      }
      switch request.path {
      case "/flaky": return call == 1 ? .status(503) : .text("fine")
      case "/missing": return .status(404)
      default: return .text("ok")
      }
    }
    let chain = RequestChain(
      transport: URLSessionTransport(),
      middleware: [Retrying(NetworkHandler.RetryPolicy(maxAttempts: 3, backoff: .immediate, jitter: .none))])
    let flaky = try await chain.send(HTTPRequest(url: server.url("/flaky")))  // 503, then 200
    #expect(flaky.status == 200)
    let missing = try await chain.send(HTTPRequest(url: server.url("/missing")))
    #expect(missing.status == 404)

    let statistics = chain.statistics
    #expect(statistics.requests == 2)
    #expect(statistics.inFlight == 0)
    #expect(statistics.responsesByClass[2] == 1)
    #expect(statistics.responsesByClass[4] == 1)
    #expect(statistics.attempts == 3)
    #expect(statistics.retriesAfterStatus == 1)
    #expect(statistics.retriesAfterError == 0)
    #expect(statistics.transportFailures == 0)
    // "fine"; the 503 and the 404 have empty bodies.
    #expect(statistics.receivedBytes == 4)
    let readings = chain.counterReadings()
    #expect(counterValue(readings, "kiln_http_client_retries_total", [("reason", "status")]) == 1)
    #expect(counterValue(readings, "kiln_http_client_responses_total", [("status_class", "4xx")]) == 1)
    #expect(counterValue(readings, "kiln_http_client_attempts_total") == 3)
    try await server.stop()
  }

  @Test("failures are counted by kind: a timed-out attempt on the injected clock, a transport error, a cancellation")
  func failures() async throws {
    let clock = ManualClock()
    let hanging = RequestChain(
      transport: StubTransport(replies: [.status(200, delay: .never)]),
      middleware: [AttemptTimeout(.seconds(5), clock: clock)])
    let url = URL(string: "https://api.example.com/slow")!
    let timedOut = Task { try await hanging.send(HTTPRequest(url: url)) }
    await clock.waitForSleepers(count: 1)
    clock.advance(by: .seconds(5))
    await #expect(throws: NetworkError.self) { try await timedOut.value }
    #expect(hanging.statistics.attemptTimeouts == 1)
    #expect(hanging.statistics.timeoutFailures == 1)

    let refused = RequestChain(
      transport: StubTransport(replies: [.failure(.connectionLost), .failure(.connectionRefused)]),
      middleware: [Retrying(NetworkHandler.RetryPolicy(maxAttempts: 2, backoff: .immediate, jitter: .none))])
    await #expect(throws: NetworkError.self) { try await refused.send(HTTPRequest(url: url)) }
    #expect(refused.statistics.retriesAfterError == 1)
    #expect(refused.statistics.attempts == 2)
    #expect(refused.statistics.transportFailures == 1)

    let never = RequestChain(transport: StubTransport(replies: [.status(200, delay: .never)]))
    let cancelled = Task { try await never.send(HTTPRequest(url: url)) }
    try #require(await poll(timeout: .seconds(30)) { never.statistics.inFlight == 1 })
    cancelled.cancel()
    await #expect(throws: NetworkError.self) { try await cancelled.value }
    #expect(never.statistics.cancellations == 1)
    #expect(never.statistics.inFlight == 0)
  }

  @Test("a rejected credential and a refresh that fails are counted once per request")
  func authentication() async throws {
    struct Broken: Authenticator {
      struct Expired: Error {}
      func apply(_ credential: Int, to request: inout HTTPRequest) {
        request.headers["Authorization"] = "Bearer \(credential)"
      }
      func refresh(_ credential: Int) async throws -> Int { throw Expired() }
    }
    let server = try await TestServer.start { _ in .status(401) }
    let handler = NetworkHandler(
      transport: URLSessionTransport(),
      authentication: AuthenticationInterceptor(authenticator: Broken(), credential: 0))
    let target = URLTarget(baseURL: server.baseURL, path: "me")
    await #expect(throws: NetworkError.self) { try await handler.request(target) }
    #expect(handler.statistics.authenticationRejections == 1)
    #expect(handler.statistics.refreshFailures == 1)
    #expect(handler.statistics.otherFailures == 1)
    try await server.stop()
  }

  @Test("single flight: every identical GET counts once, as the leader or a joiner")
  func singleFlight() async throws {
    let gate = Gate()
    let server = try await TestServer.start { _ in
      try? await gate.wait()
      return .text("shared")
    }
    let handler = NetworkHandler(transport: URLSessionTransport(), deduplicatesRequests: true)
    let target = URLTarget(baseURL: server.baseURL, path: "shared")
    let deduplicating = try #require(handler.chain.first(Deduplicating.self))
    let requests = (0..<10).map { _ in Task { try await handler.request(target) } }
    let shared = HTTPRequest(url: server.url("/shared"))
    try #require(await poll(timeout: .seconds(30)) { deduplicating.callerCount(for: shared) == 10 })
    gate.open()
    for request in requests { _ = try await request.value }
    let readings = handler.counterReadings()
    #expect(counterValue(readings, "kiln_http_client_single_flight_total", [("role", "leader")]) == 1)
    #expect(counterValue(readings, "kiln_http_client_single_flight_total", [("role", "joiner")]) == 9)
    #expect(handler.statistics.requests == 10)
    #expect(handler.statistics.attempts == 1)
    #expect(server.requests.count == 1)
    try await server.stop()
  }

  @Test("4,000 concurrent requests and 4,000 concurrent cache hits are each counted exactly")
  func stress() async throws {
    let cache = HTTPCache(store: MemoryCache<String, Data>(entryLifetime: nil))
    let fresh = StubTransport.Reply.status(
      200, headers: ["Cache-Control": "max-age=600", "Date": HTTPDate.format(Date())], body: Data("x".utf8))
    let chain = RequestChain(
      transport: StubTransport(replies: Array(repeating: fresh, count: 4_001)), middleware: [HTTPCaching(cache)])
    let cached = URL(string: "https://api.example.com/cached")!
    _ = try await chain.send(HTTPRequest(url: cached))
    try await withThrowingTaskGroup(of: Void.self) { group in
      for index in 0..<8_000 {
        group.addTask {
          let url = index.isMultiple(of: 2) ? cached : URL(string: "https://api.example.com/\(index)")!
          let request = HTTPRequest(url: url, headers: index.isMultiple(of: 2) ? [:] : ["Cache-Control": "no-store"])
          _ = try await chain.send(request)
        }
      }
      try await group.waitForAll()
    }
    #expect(chain.statistics.requests == 8_001)
    #expect(chain.statistics.responsesByClass[2] == 8_001)
    #expect(chain.statistics.attempts == 4_001)
    #expect(chain.statistics.inFlight == 0)
    #expect(cache.statistics.hits == 4_000)
    #expect(cache.statistics.misses + cache.statistics.requestForwards == 4_001)
  }
}
