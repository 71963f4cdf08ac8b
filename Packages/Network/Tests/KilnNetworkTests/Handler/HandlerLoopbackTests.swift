import Foundation
import KilnNetwork
import KilnStorage
import KilnTesting
import Testing
import _KilnTestServer

/// A target on the loopback server.
private struct Loopback: TargetGroup {
  var baseURL: URL
  var segments: [String]
  var task: NetworkTask = .plain

  init(baseURL: URL, path: String) {
    self.baseURL = baseURL
    self.segments = [path]
  }

  init(baseURL: URL, segments: [String], task: NetworkTask) {
    self.baseURL = baseURL
    self.segments = segments
    self.task = task
  }

  var path: String { segments.joined(separator: "/") }
  var pathSegments: [String] { segments }
}

/// The handler, end to end, with each real transport against the loopback server.
@Suite("NetworkHandler over loopback", .timeLimit(.minutes(2)))
struct HandlerLoopbackTests {
  @Test(
    "a 503 with Retry-After is retried after exactly that wait, on the injected clock",
    arguments: TransportKind.allCases)
  func retryAfter(kind: TransportKind) async throws {
    let attempts = Recorder<Int>()
    let server = try await TestServer.start { request in
      attempts.append(attempts.values.count + 1)
      return attempts.values.count == 1
        ? TestResponse(status: 503, headers: [("Retry-After", "3")])
        : .json(["id": 1])
    }
    try await kind.withTransport { transport in
      let clock = ManualClock()
      let handler = NetworkHandler(transport: transport, retryPolicy: .default, clock: clock)
      let target = Loopback(baseURL: server.baseURL, path: "flaky")
      let request = send(handler, target)
      await clock.waitForSleepers(count: 1)
      #expect(server.requestCount(path: "/flaky") == 1)
      clock.advance(by: .milliseconds(2999))
      #expect(clock.sleeperCount == 1)
      clock.advance(by: .milliseconds(1))
      let response = try await request.value.get()
      #expect(response.status == 200)
      #expect(server.requestCount(path: "/flaky") == 2)
    }
    try await server.stop()
  }

  @Test("parallel 401s refresh the credential once; every request then succeeds", arguments: TransportKind.allCases)
  func refreshOnce(kind: TransportKind) async throws {
    struct Tokens: Authenticator {
      let refreshes: AsyncCounter
      func apply(_ credential: Int, to request: inout HTTPRequest) {
        request.headers["Authorization"] = "Bearer token-\(credential)"
      }
      func refresh(_ credential: Int) async throws -> Int {
        refreshes.increment()
        return credential + 1
      }
    }
    let server = try await TestServer.start { request in
      request.headers["authorization"] == "Bearer token-1" ? .json(["ok": true]) : .status(401)
    }
    try await kind.withTransport { transport in
      let refreshes = AsyncCounter()
      let interceptor = AuthenticationInterceptor(authenticator: Tokens(refreshes: refreshes), credential: 0)
      let handler = NetworkHandler(transport: transport, authentication: interceptor)
      let target = Loopback(baseURL: server.baseURL, path: "me")
      let tasks = (0..<6).map { _ in send(handler, target) }
      for task in tasks {
        let status = try await task.value.get().status
        #expect(status == 200)
      }
      #expect(refreshes.value == 1)
    }
    let authorizations = server.requests.map { $0.headers["authorization"] ?? "" }
    #expect(authorizations.filter { $0 == "Bearer token-1" }.count == 6)
    #expect(authorizations.filter { $0 == "Bearer token-0" }.count <= 6)
    try await server.stop()
  }

  @Test(
    "six 401s released together while the refresh fails at once: one refresh, six typed failures (100 rounds)",
    arguments: TransportKind.allCases)
  func failedRefreshEndsTheBurst(kind: TransportKind) async throws {
    struct Revoked: Authenticator {
      let refreshes: AsyncCounter
      func apply(_ credential: Int, to request: inout HTTPRequest) {
        request.headers["Authorization"] = "Bearer token-\(credential)"
      }
      func refresh(_ credential: Int) async throws -> Int {
        refreshes.increment()
        throw TestError("revoked")
      }
    }
    let arrived = AsyncCounter()
    let server = try await TestServer.start { _ in
      // Every request of a round waits for the other five: the six 401s leave together.
      arrived.increment()
      let count = arrived.value
      await arrived.wait(untilAtLeast: (count + 5) / 6 * 6)
      return .status(401)
    }
    try await kind.withTransport { transport in
      for round in 0..<100 {
        let refreshes = AsyncCounter()
        let interceptor = AuthenticationInterceptor(authenticator: Revoked(refreshes: refreshes), credential: 0)
        let handler = NetworkHandler(transport: transport, retryPolicy: .never, authentication: interceptor)
        let target = Loopback(baseURL: server.baseURL, path: "me")
        let tasks = (0..<6).map { _ in send(handler, target) }
        for task in tasks {
          let result = await task.value
          guard case .failure(.authentication(.refreshFailed(let reason))) = result else {
            Issue.record("round \(round): expected the refresh's failure, got \(result)")
            continue
          }
          #expect(reason.contains("revoked"))
        }
        #expect(refreshes.value == 1, "round \(round)")
      }
    }
    #expect(server.requests.count == 600)
    try await server.stop()
  }

  @Test(
    "a chain with every stage: a 401 refreshes, a 503 with Retry-After waits 2 s and is retried, then a fresh hit sends nothing",
    arguments: TransportKind.allCases)
  func everyStage(kind: TransportKind) async throws {
    struct Tokens: Authenticator {
      func apply(_ credential: Int, to request: inout HTTPRequest) {
        request.headers["Authorization"] = "Bearer token-\(credential)"
      }
      func refresh(_ credential: Int) async throws -> Int { credential + 1 }
    }
    struct AttemptRecorder: NetworkWatch {
      let attempts: Recorder<Int>
      func willSend(_ request: HTTPRequest, attempt: Int) { attempts.append(attempt) }
    }
    let accepted = AsyncCounter()
    let server = try await TestServer.start { request in
      guard request.headers["authorization"] == "Bearer token-1" else { return .status(401) }
      accepted.increment()
      return accepted.value == 1
        ? .status(503, headers: [("Retry-After", "2")])
        : .json(["ok": true], headers: [("Cache-Control", "max-age=60")])
    }
    try await kind.withTransport { transport in
      let clock = ManualClock()
      let attempts = Recorder<Int>()
      let chain = RequestChain(
        transport: transport,
        middleware: [
          Deduplicating(),
          HTTPCaching(HTTPCache(store: MemoryCache<String, Data>(entryLifetime: nil))),
          Retrying(NetworkHandler.RetryPolicy(jitter: .none), clock: clock),
          Authenticating(AuthenticationInterceptor(authenticator: Tokens(), credential: 0)),
          Watching([AttemptRecorder(attempts: attempts)]),
          AttemptTimeout(.seconds(30)),
        ])
      let handler = NetworkHandler(chain: chain)
      let target = Loopback(baseURL: server.baseURL, path: "flaky")
      let first = send(handler, target)
      await clock.waitForSleepers(count: 1)  // the Retry-After wait
      clock.advance(by: .milliseconds(1999))
      #expect(clock.sleeperCount == 1)
      clock.advance(by: .milliseconds(1))
      #expect(try await first.value.get().status == 200)
      #expect(server.requestCount(path: "/flaky") == 3)  // 401, 503, 200
      #expect(attempts.values == [1, 1, 2])  // the refresh re-sends attempt 1

      let hit = try await handler.request(target)
      #expect(hit.cacheStatus?.hit == true)
      #expect(server.requestCount(path: "/flaky") == 3)
    }
    try await server.stop()
  }

  @Test(
    "redirects: none per handler returns the 302; a target that follows overrides it, and a limit stops a loop",
    arguments: TransportKind.allCases)
  func redirects(kind: TransportKind) async throws {
    struct Hop: TargetGroup {
      var baseURL: URL
      var path: String
      var redirects: TransportOptions.Redirects?
    }
    let server = try await TestServer.start { request in
      switch request.path {
      case "/start": .redirect(to: "/end")
      case "/loop": .redirect(to: "/loop")
      default: .json(["at": request.path])
      }
    }
    try await kind.withTransport { transport in
      let handler = NetworkHandler(transport: transport, retryPolicy: .never, redirects: .none)
      let kept = await send(handler, Hop(baseURL: server.baseURL, path: "start")).value
      #expect(kept.statusCode == 302)
      let followed = try await handler.request(
        Hop(baseURL: server.baseURL, path: "start", redirects: .follow(limit: 5)), as: [String: String].self)
      #expect(followed == ["at": "/end"])
      let looping = await send(handler, Hop(baseURL: server.baseURL, path: "loop", redirects: .follow(limit: 3))).value
      guard case .failure(.transport(.tooManyRedirects)) = looping else {
        Issue.record("expected too many redirects, got \(looping)")
        return
      }
    }
    #expect(server.requestCount(path: "/loop") == 4)
    try await server.stop()
  }

  @Test("path segments and query values round-trip through the server exactly", arguments: TransportKind.allCases)
  func percentEncoding(kind: TransportKind) async throws {
    let server = try await TestServer.start { request in
      .json(["path": request.path, "q": request.query["q"] ?? "-", "uri": request.uri])
    }
    let value = "a&b=c+d e/f?g#h%i 🔥"
    try await kind.withTransport { transport in
      let handler = NetworkHandler(transport: transport)
      var parameters: QueryParameters = ["q": value]
      parameters.append("2", for: "tag")
      let target = Loopback(baseURL: server.baseURL, segments: ["files", value], task: .parameters(parameters))
      let echoed = try await handler.request(target, as: [String: String].self)
      #expect(echoed["q"] == value)
      #expect(echoed["path"] == "/files/\(value)")
      #expect(
        echoed["uri"]
          == "/files/a&b=c%2Bd%20e%2Ff%3Fg%23h%25i%20%F0%9F%94%A5?q=a%26b%3Dc%2Bd%20e%2Ff%3Fg%23h%25i%20%F0%9F%94%A5&tag=2"
      )
    }
    try await server.stop()
  }

  @Test("malformed JSON from the server is a decoding error with the response", arguments: TransportKind.allCases)
  func malformedJSON(kind: TransportKind) async throws {
    let server = try await TestServer.start { _ in .text(#"{"id": 1,"#) }
    try await kind.withTransport { transport in
      struct Item: Decodable, Sendable { var id: Int }
      let handler = NetworkHandler(transport: transport)
      do throws(NetworkError) {
        _ = try await handler.request(Loopback(baseURL: server.baseURL, path: "item"), as: Item.self)
        Issue.record("malformed JSON decoded")
      } catch .decoding(_, let response) {
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"id": 1,"#)
      } catch {
        Issue.record("expected a decoding error, got \(error)")
      }
    }
    try await server.stop()
  }

  @Test(
    "a server slower than the handler's timeout fails with timedOut, on the injected clock",
    arguments: TransportKind.allCases)
  func timeout(kind: TransportKind) async throws {
    let server = try await TestServer.start { _ in TestResponse.json(["late": true]).delayed(by: .seconds(2)) }
    try await kind.withTransport { transport in
      let clock = ManualClock()
      let handler = NetworkHandler(transport: transport, retryPolicy: .never, timeout: .seconds(1), clock: clock)
      let request = send(handler, Loopback(baseURL: server.baseURL, path: "slow"))
      await clock.waitForSleepers(count: 1)
      clock.advance(by: .seconds(1))
      let result = await request.value
      guard case .failure(.timedOut(let limit)) = result else {
        Issue.record("expected a timeout, got \(result)")
        return
      }
      #expect(limit == .seconds(1))
    }
    try await server.stop()
  }
}
