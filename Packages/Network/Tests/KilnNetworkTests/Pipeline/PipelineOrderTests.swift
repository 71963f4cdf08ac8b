import Foundation
import KilnCore
import KilnNetwork
import KilnStorage
import KilnTesting
import Testing

/// Counts the credentials it adds: "token-<round>", the round growing with each refresh.
private final class CountingAuthentication: RequestAuthenticating {
  private let state = Recorder<Int>()
  private let round = AsyncCounter()

  var authenticateCount: Int { state.count }

  /// Ends the current round as a successful refresh would.
  func rotate() { round.increment() }

  func authenticate(_ request: inout HTTPRequest) async throws(NetworkError) -> Int {
    let round = round.value
    state.append(round)
    request.headers["Authorization"] = "Bearer token-\(round)"
    return round
  }

  func isRejection(_ response: HTTPResponse, for request: HTTPRequest) -> Bool { response.status == 401 }

  func refresh(rejectedGeneration: Int) async throws(NetworkError) {
    if round.value == rejectedGeneration { rotate() }
  }
}

/// Records the order in which stages see a request, by name.
private struct Trace: RequestMiddleware {
  let name: String
  let log: Recorder<String>

  func send(_ request: HTTPRequest, context: RequestContext, next: RequestNext) async throws(NetworkError)
    -> HTTPResponse
  {
    log.append("\(name) \(context.attempt)")
    return try await next.send(request, context: context)
  }
}

private let url = URL(string: "https://api.example.com/items/1")!

private func fresh(_ body: String = "v1") -> StubTransport.Reply {
  .status(200, headers: ["Cache-Control": "max-age=60", "Date": HTTPDate.format(Date())], body: Data(body.utf8))
}

@Suite("The request pipeline's order", .timeLimit(.minutes(1)))
struct PipelineOrderTests {
  @Test("stages see a request outermost first, and a custom stage sits wherever it is put")
  func outermostFirst() async throws {
    let log = Recorder<String>()
    let transport = StubTransport(replies: [.status(503), .status(200)])
    let chain = RequestChain(
      transport: transport,
      middleware: [
        Trace(name: "outer", log: log),
        Retrying(NetworkHandler.RetryPolicy(backoff: .immediate, jitter: .none)),
        Trace(name: "inner", log: log),
      ])
    let response = try await chain.send(HTTPRequest(url: url))
    #expect(response.status == 200)
    #expect(log.values == ["outer 1", "inner 1", "inner 2"])
  }

  @Test("a fresh cache hit outside retry and authentication reaches neither; inside, it reaches both")
  func freshHitSkipsInnerStages() async throws {
    for cacheOutside in [true, false] {
      let transport = StubTransport(replies: [fresh()])
      let authentication = CountingAuthentication()
      let log = Recorder<String>()
      let cache = HTTPCaching(HTTPCache(store: MemoryCache<String, Data>(entryLifetime: nil)))
      let inner: [any RequestMiddleware] = [
        Trace(name: "retry", log: log), Retrying(.never), Authenticating(authentication),
      ]
      let chain = RequestChain(
        transport: transport, middleware: cacheOutside ? [cache] + inner : inner + [cache])
      _ = try await chain.send(HTTPRequest(url: url))
      let hit = try await chain.send(HTTPRequest(url: url))
      #expect(hit.cacheStatus?.hit == true)
      #expect(transport.requestCount == 1)
      #expect(log.count == (cacheOutside ? 1 : 2), "cache outside: \(cacheOutside)")
      #expect(authentication.authenticateCount == (cacheOutside ? 1 : 2), "cache outside: \(cacheOutside)")
    }
  }

  @Test("a retried attempt is authenticated again when authentication is inside retry, not when outside")
  func retriedAttemptReauthenticated() async throws {
    for authenticationInside in [true, false] {
      let clock = ManualClock()
      let transport = StubTransport(replies: [.status(503), .status(200)])
      let authentication = CountingAuthentication()
      let retrying = Retrying(NetworkHandler.RetryPolicy(backoff: .constant(.seconds(1)), jitter: .none), clock: clock)
      let chain = RequestChain(
        transport: transport,
        middleware: authenticationInside
          ? [retrying, Authenticating(authentication)] : [Authenticating(authentication), retrying])
      let response = Task { try await chain.send(HTTPRequest(url: url)) }
      await clock.waitForSleepers(count: 1)
      authentication.rotate()  // another request refreshed the credential during the wait
      clock.advance(by: .seconds(1))
      #expect(try await response.value.status == 200)
      let sent = transport.requests.map { $0.headers["Authorization"] ?? "none" }
      #expect(
        sent == (authenticationInside ? ["Bearer token-0", "Bearer token-1"] : ["Bearer token-0", "Bearer token-0"]),
        "authentication inside: \(authenticationInside)")
    }
  }

  @Test("a timeout inside retry bounds each attempt; outside, it bounds all of them together")
  func timeoutPerAttempt() async throws {
    for timeoutInside in [true, false] {
      let clock = ManualClock()
      // Each attempt takes 0.8 s: the first fails with 503, the second succeeds.
      let transport = StubTransport(
        clock: clock,
        replies: [.status(503, delay: .after(.milliseconds(800))), .status(200, delay: .after(.milliseconds(800)))])
      let retrying = Retrying(NetworkHandler.RetryPolicy(backoff: .immediate, jitter: .none), clock: clock)
      let timeout = AttemptTimeout(.seconds(1), clock: clock)
      let chain = RequestChain(
        transport: transport, middleware: timeoutInside ? [retrying, timeout] : [timeout, retrying])
      let response = start(chain)
      await clock.waitForSleepers(count: 2)  // the first attempt and the limit
      clock.advance(by: .milliseconds(800))
      await transport.waitForRequests(2)
      await clock.waitForSleepers(count: 2)  // the second attempt and a limit
      // Inside: the second attempt's own limit is at 1.8 s, its reply at 1.6 s. Outside: the
      // one limit is at 1 s.
      clock.advance(by: timeoutInside ? .milliseconds(800) : .milliseconds(300))
      let result = await response.value
      if timeoutInside {
        #expect(result.statusCode == 200)
      } else {
        guard case .failure(.timedOut(let limit)) = result else {
          Issue.record("expected the whole exchange to time out, got \(result)")
          continue
        }
        #expect(limit == .seconds(1))
      }
    }
  }

  @Test("the timeout returns at its limit even from a transport that ignores cancellation")
  func timeoutReturnsAtLimit() async {
    let clock = ManualClock()
    let release = Gate()
    let chain = RequestChain(
      transport: Stubborn(release: release), middleware: [AttemptTimeout(.seconds(1), clock: clock)])
    let response = start(chain)
    await clock.waitForSleepers(count: 1)
    clock.advance(by: .seconds(1))
    let result = await response.value
    guard case .failure(.timedOut) = result else {
      Issue.record("expected a timeout, got \(result)")
      return
    }
    release.open()
  }
}

/// Sends a GET of `url` through `chain` in a task of its own.
private func start(_ chain: RequestChain) -> Task<Result<HTTPResponse, NetworkError>, Never> {
  Task {
    do throws(NetworkError) {
      return .success(try await chain.send(HTTPRequest(url: url)))
    } catch {
      return .failure(error)
    }
  }
}

/// A transport that answers only when `release` opens, whatever cancellation says.
private struct Stubborn: Transport {
  let release: Gate

  func send(_ request: HTTPRequest, options: TransportOptions) async throws(TransportError) -> HTTPResponse {
    // An unstructured task: the caller's cancellation does not reach it.
    await Task { try? await release.wait() }.value
    return HTTPResponse(status: 200)
  }
}

@Suite("One source of time", .timeLimit(.minutes(1)))
struct OneSourceOfTimeTests {
  @Test("a handler given only a ManualClock dates Retry-After by that clock: advancing it moves both")
  func retryAfterDateFollowsTheClock() async throws {
    let clock = ManualClock()
    let retryAt = HTTPDate.format(clock.date.addingTimeInterval(5))
    let transport = StubTransport(replies: [.status(503, headers: ["Retry-After": retryAt]), .status(200)])
    let handler = NetworkHandler(
      transport: transport, retryPolicy: NetworkHandler.RetryPolicy(jitter: .none), clock: clock)
    let response = Task { try await handler.request(TestAPI.item(id: 1)) }
    await clock.waitForSleepers(count: 1)
    clock.advance(by: .milliseconds(4999))
    #expect(clock.sleeperCount == 1)
    clock.advance(by: .milliseconds(1))
    #expect(try await response.value.status == 200)
  }

  @Test("dateProvider(for:) follows any clock from the date it was made")
  func anchoredProvider() {
    struct Ticks: Clock {
      let manual = ManualClock()
      var now: ManualClock.Instant { manual.now }
      var minimumResolution: Duration { .zero }
      func sleep(until deadline: ManualClock.Instant, tolerance: Duration?) async throws {}
    }
    let clock = Ticks()
    let now = dateProvider(for: clock)
    let start = now()
    clock.manual.advance(by: .seconds(90))
    #expect(abs(now().timeIntervalSince(start) - 90) < 0.001)
  }
}
