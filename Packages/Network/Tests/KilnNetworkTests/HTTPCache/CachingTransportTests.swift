import Foundation
import KilnNetwork
import KilnTesting
import Synchronization
import Testing

/// A transport for logic tests: answers with a closure and records every request it gets.
final class ScriptedTransport: Transport {
  typealias Respond = @Sendable (HTTPRequest) async throws(TransportError) -> HTTPResponse

  let requests = Recorder<HTTPRequest>()
  private let respond: Respond

  init(_ respond: @escaping Respond) {
    self.respond = respond
  }

  func send(_ request: HTTPRequest, options: TransportOptions) async throws(TransportError) -> HTTPResponse {
    requests.append(request)
    return try await respond(request)
  }
}

@Suite("CachingTransport", .timeLimit(.minutes(1)))
struct CachingTransportTests {
  let now = ManualDate(t0)
  let store = SpyKeyValueStore<String, Data>()

  func makeCache(policy: HTTPCachePolicy = .private) -> HTTPCache {
    HTTPCache(store: store, policy: policy, now: now.provider)
  }

  func ok(_ headers: HTTPHeaders, body: String = "v1", status: Int = 200) -> HTTPResponse {
    var headers = headers
    if !headers.contains("Date") { headers.set(HTTPDate.format(now.now), for: "Date") }
    return HTTPResponse(status: status, headers: headers, body: Data(body.utf8))
  }

  @Test("a miss is forwarded and stored; the next request is a hit with Age and no request")
  func missThenHit() async throws {
    let origin = ScriptedTransport { _ in self.ok(["Cache-Control": "max-age=60"]) }
    let transport = origin.caching(in: makeCache())
    let first = try await transport.send(getRequest())
    #expect(first.cacheStatus == HTTPCacheStatus(forward: .uriMiss, forwardStatus: 200, stored: true))
    now.advance(by: .seconds(30))
    let second = try await transport.send(getRequest())
    #expect(second.body == Data("v1".utf8))
    #expect(second.headers["Age"] == "30")
    #expect(second.cacheStatus?.hit == true)
    #expect(origin.requests.values.count == 1)
  }

  @Test("a stored 206 never stands in when the origin fails: not for a range it lacks, not for the whole")
  func partialIsNoFallback() async throws {
    let failing = Atomic<Bool>(false)
    let origin = ScriptedTransport { request throws(TransportError) in
      if failing.load(ordering: .relaxed) { throw .connectionRefused }
      return self.ok(
        ["Cache-Control": "max-age=10", "ETag": "\"v1\"", "Content-Range": "bytes 0-4/10"], body: "01234",
        status: 206)
    }
    let transport = origin.caching(in: makeCache())
    let head = try await transport.send(getRequest(["Range": "bytes=0-4"]))
    #expect(head.cacheStatus?.stored == true)
    failing.store(true, ordering: .relaxed)
    now.advance(by: .seconds(30))  // stale: a disconnected cache would serve a stale 200
    for request in [getRequest(["Range": "bytes=5-9"]), getRequest(["Range": "bytes=0-4"]), getRequest()] {
      do {
        let response = try await transport.send(request)
        #expect(response.status == 504, "\(request.headers): got \(response.status) \(response.body.count) bytes")
      } catch {
        // No response at all: also never the partial.
      }
    }
  }

  @Test("a stale response is revalidated with If-None-Match; a 304 freshens it and serves the stored body")
  func etagRevalidation() async throws {
    let origin = ScriptedTransport { request in
      request.headers["If-None-Match"] == "\"v1\""
        ? self.ok(["Cache-Control": "max-age=100", "ETag": "\"v1\"", "X-Version": "2"], body: "", status: 304)
        : self.ok(["Cache-Control": "max-age=10", "ETag": "\"v1\"", "X-Version": "1"])
    }
    let transport = origin.caching(in: makeCache())
    _ = try await transport.send(getRequest())
    now.advance(by: .seconds(11))
    let revalidated = try await transport.send(getRequest())
    #expect(revalidated.status == 200)
    #expect(revalidated.body == Data("v1".utf8))
    #expect(revalidated.headers["X-Version"] == "2")
    #expect(revalidated.cacheStatus == HTTPCacheStatus(forward: .stale, forwardStatus: 304, ttl: 100, stored: true))
    now.advance(by: .seconds(99))
    #expect(try await transport.send(getRequest()).cacheStatus?.hit == true)
    #expect(origin.requests.values.map { $0.headers["If-None-Match"] } == [nil, "\"v1\""])
  }

  @Test("Last-Modified revalidates with If-Modified-Since")
  func lastModifiedRevalidation() async throws {
    let modified = HTTPDate.format(t0.plus(-1000))
    let origin = ScriptedTransport { request in
      request.headers["If-Modified-Since"] == modified
        ? self.ok(["Last-Modified": modified], body: "", status: 304)
        : self.ok(["Last-Modified": modified])
    }
    let transport = origin.caching(in: makeCache())
    _ = try await transport.send(getRequest())
    now.advance(by: .seconds(50))  // heuristic lifetime: 100 s
    #expect(try await transport.send(getRequest()).cacheStatus?.hit == true)
    now.advance(by: .seconds(60))
    let revalidated = try await transport.send(getRequest())
    #expect(revalidated.body == Data("v1".utf8) && revalidated.cacheStatus?.forwardStatus == 304)
    #expect(origin.requests.values.count == 2)
  }

  @Test("a 304 for another representation leads to one unconditional request")
  func mismatchedNotModified() async throws {
    let count = AsyncCounter()
    let origin = ScriptedTransport { request in
      count.increment()
      if request.headers.contains("If-None-Match") {
        return self.ok(["ETag": "\"other\""], body: "", status: 304)
      }
      return self.ok(["Cache-Control": "max-age=10", "ETag": "\"v\(count.value)\""], body: "v\(count.value)")
    }
    let transport = origin.caching(in: makeCache())
    _ = try await transport.send(getRequest())
    now.advance(by: .seconds(20))
    let response = try await transport.send(getRequest())
    #expect(response.status == 200 && response.body == Data("v3".utf8))
    #expect(origin.requests.values.map { $0.headers.contains("If-None-Match") } == [false, true, false])
  }

  @Test("stale-while-revalidate serves stale to every caller at once and revalidates exactly once")
  func staleWhileRevalidate() async throws {
    let gate = Gate()
    let origin = ScriptedTransport { request in
      if request.headers.contains("If-None-Match") {
        try? await gate.wait()
        return self.ok(["Cache-Control": "max-age=10, stale-while-revalidate=60", "ETag": "\"v2\""], body: "v2")
      }
      return self.ok(["Cache-Control": "max-age=10, stale-while-revalidate=60", "ETag": "\"v1\""])
    }
    let cache = makeCache()
    let transport = origin.caching(in: cache)
    _ = try await transport.send(getRequest())
    now.advance(by: .seconds(20))
    let responses = try await withThrowingTaskGroup(of: HTTPResponse.self) { group in
      for _ in 0..<20 { group.addTask { try await transport.send(getRequest()) } }
      return try await group.reduce(into: []) { $0.append($1) }
    }
    #expect(responses.count == 20)
    #expect(responses.allSatisfy { $0.body == Data("v1".utf8) && $0.cacheStatus?.detail == "stale-while-revalidate" })
    #expect(cache.revalidationsInFlight == 1)
    gate.open()
    await cache.waitForRevalidations()
    #expect(origin.requests.values.count == 2)
    let fresh = try await transport.send(getRequest())
    #expect(fresh.body == Data("v2".utf8) && fresh.cacheStatus?.hit == true)
    #expect(cache.revalidationsInFlight == 0)
  }

  @Test("stale-if-error serves stale on a 503 and a dropped connection within the window; a 503 passes after it")
  func staleIfError() async throws {
    let failure = LockedBox<TransportError?>(nil)
    let origin = ScriptedTransport { request throws(TransportError) in
      if request.headers.contains("If-None-Match") {
        if let error = failure.value { throw error }
        return self.ok(["Retry-After": "5"], body: "down", status: 503)
      }
      return self.ok(["Cache-Control": "max-age=10, stale-if-error=60", "ETag": "\"v1\""])
    }
    let transport = origin.caching(in: makeCache())
    _ = try await transport.send(getRequest())
    now.advance(by: .seconds(30))
    let served = try await transport.send(getRequest())
    #expect(served.status == 200 && served.body == Data("v1".utf8))
    #expect(served.cacheStatus?.detail == "stale-if-error" && served.cacheStatus?.forwardStatus == 503)
    failure.value = .connectionLost
    let dropped = try await transport.send(getRequest())
    #expect(dropped.status == 200 && dropped.cacheStatus?.forwardStatus == nil)
    now.advance(by: .seconds(41))
    failure.value = nil
    let passed = try await transport.send(getRequest())
    #expect(passed.status == 503 && passed.body == Data("down".utf8))
    failure.value = .connectionLost
    let disconnected = try await transport.send(getRequest())
    #expect(disconnected.status == 200 && disconnected.cacheStatus?.detail == "disconnected")
    let unreachable = try await transport.send(getRequest(["Cache-Control": "max-age=0"]))
    #expect(unreachable.status == 504 && unreachable.isGeneratedByCache)
  }

  @Test("must-revalidate is never served stale: a 503 passes through, an unreachable origin gives a generated 504")
  func mustRevalidate() async throws {
    let failure = LockedBox<TransportError?>(nil)
    let origin = ScriptedTransport { request throws(TransportError) in
      if request.headers.contains("If-None-Match") {
        if let error = failure.value { throw error }
        return self.ok([:], body: "down", status: 503)
      }
      return self.ok(["Cache-Control": "max-age=10, must-revalidate, stale-if-error=60", "ETag": "\"v1\""])
    }
    let transport = origin.caching(in: makeCache())
    _ = try await transport.send(getRequest())
    now.advance(by: .seconds(20))
    #expect(try await transport.send(getRequest()).status == 503)
    failure.value = .connectionRefused
    let generated = try await transport.send(getRequest())
    #expect(generated.status == 504 && generated.isGeneratedByCache)
    failure.value = .cancelled
    await #expect(throws: TransportError.cancelled) { try await transport.send(getRequest()) }
    failure.value = .bodyTooLarge(limit: 1)
    await #expect(throws: TransportError.bodyTooLarge(limit: 1)) { try await transport.send(getRequest()) }
  }

  @Test("without anything stored, a transport error is thrown as it is")
  func errorWithoutStored() async throws {
    let origin = ScriptedTransport { _ throws(TransportError) in throw .connectionRefused }
    let transport = origin.caching(in: makeCache())
    await #expect(throws: TransportError.connectionRefused) { try await transport.send(getRequest()) }
  }

  @Test("only-if-cached with nothing stored answers a generated 504 without a request")
  func onlyIfCached() async throws {
    let origin = ScriptedTransport { _ in self.ok([:]) }
    let response = try await origin.caching(in: makeCache()).send(getRequest(["Cache-Control": "only-if-cached"]))
    #expect(response.status == 504 && response.isGeneratedByCache)
    #expect(origin.requests.values.isEmpty)
  }

  @Test("a successful POST invalidates the URL and its same-origin Location; a failed one does not")
  func invalidation() async throws {
    let postStatus = LockedBox(500)
    let origin = ScriptedTransport { request in
      request.method == .post
        ? self.ok(["Location": "/articles/7"], body: "", status: postStatus.value)
        : self.ok(["Cache-Control": "max-age=600"])
    }
    let transport = origin.caching(in: makeCache())
    let list = URL(string: "https://api.example.com/articles")!
    let item = URL(string: "https://api.example.com/articles/7")!
    _ = try await transport.send(getRequest(url: list))
    _ = try await transport.send(getRequest(url: item))
    let failed = try await transport.send(HTTPRequest(method: .post, url: list))
    #expect(failed.cacheStatus?.forward == .method)
    #expect(try await transport.send(getRequest(url: list)).cacheStatus?.hit == true)
    #expect(try await transport.send(getRequest(url: item)).cacheStatus?.hit == true)
    postStatus.value = 201
    _ = try await transport.send(HTTPRequest(method: .post, url: list))
    #expect(try await transport.send(getRequest(url: list)).cacheStatus?.forward == .uriMiss)
    #expect(try await transport.send(getRequest(url: item)).cacheStatus?.forward == .uriMiss)
  }

  @Test("no-store responses and requests are never stored")
  func noStore() async throws {
    let origin = ScriptedTransport { request in
      request.url.path == "/private" ? self.ok(["Cache-Control": "no-store"]) : self.ok(["Cache-Control": "max-age=60"])
    }
    let transport = origin.caching(in: makeCache())
    let privateURL = URL(string: "https://api.example.com/private")!
    _ = try await transport.send(getRequest(url: privateURL))
    _ = try await transport.send(getRequest(["Cache-Control": "no-store"]))
    #expect(store.entries.isEmpty)
    #expect(try await transport.send(getRequest(url: privateURL)).cacheStatus?.stored == false)
    #expect(origin.requests.values.count == 3)
  }

  @Test("Vary: each variant is fetched once and served to matching requests only")
  func vary() async throws {
    let origin = ScriptedTransport { request in
      self.ok(
        ["Cache-Control": "max-age=60", "Vary": "Accept-Language"], body: request.headers["Accept-Language"] ?? "")
    }
    let transport = origin.caching(in: makeCache())
    for language in ["en", "fr", "en", "fr"] {
      let response = try await transport.send(getRequest(["Accept-Language": language]))
      #expect(response.body == Data(language.utf8))
    }
    #expect(origin.requests.values.count == 2)
    let star = ScriptedTransport { _ in self.ok(["Cache-Control": "max-age=60", "Vary": "*"]) }
    let starred = star.caching(in: makeCache())
    _ = try await starred.send(getRequest(url: URL(string: "https://api.example.com/star")!))
    _ = try await starred.send(getRequest(url: URL(string: "https://api.example.com/star")!))
    #expect(star.requests.values.count == 2)
  }

  @Test("HEAD and other safe methods pass through unstored and invalidate nothing")
  func safeMethods() async throws {
    let origin = ScriptedTransport { _ in self.ok(["Cache-Control": "max-age=60"]) }
    let transport = origin.caching(in: makeCache())
    _ = try await transport.send(getRequest())
    let head = try await transport.send(HTTPRequest(method: .head, url: exampleURL))
    #expect(head.cacheStatus?.forward == .method && head.cacheStatus?.stored == false)
    _ = try await transport.send(HTTPRequest(method: .options, url: exampleURL))
    #expect(try await transport.send(getRequest()).cacheStatus?.hit == true)
    #expect(origin.requests.values.map(\.method) == [.get, .head, .options])
  }

  @Test("a client's own conditional request goes to the origin and its 304 comes back unchanged")
  func clientConditional() async throws {
    let origin = ScriptedTransport { request in
      request.headers["If-None-Match"] == "\"mine\""
        ? self.ok(["ETag": "\"mine\""], body: "", status: 304)
        : self.ok(["Cache-Control": "max-age=10", "ETag": "\"v1\""])
    }
    let transport = origin.caching(in: makeCache())
    _ = try await transport.send(getRequest())
    now.advance(by: .seconds(20))
    let response = try await transport.send(getRequest(["If-None-Match": "\"mine\""]))
    #expect(response.status == 304 && response.body.isEmpty)
    #expect(response.cacheStatus?.forwardStatus == 304)
    #expect(origin.requests.values.last?.headers["If-None-Match"] == "\"mine\"")
  }
}

/// A value shared between a test and its transport closure.
final class LockedBox<Value: Sendable>: Sendable {
  private let storage: Mutex<Value>

  init(_ value: Value) {
    storage = Mutex(value)
  }

  var value: Value {
    get { storage.withLock { $0 } }
    set { storage.withLock { $0 = newValue } }
  }
}
