import Foundation
import KilnNetwork
import KilnTesting
import Testing

/// Bearer tokens "token-0", "token-1", …; each refresh waits for `gate` and may fail.
private struct TokenAuthenticator: Authenticator {
  let refreshes: AsyncCounter
  let gate: Gate
  let failure: TestError?

  init(gate: Gate = Gate(isOpen: true), failure: TestError? = nil) {
    self.refreshes = AsyncCounter()
    self.gate = gate
    self.failure = failure
  }

  func apply(_ credential: Int, to request: inout HTTPRequest) {
    request.headers["Authorization"] = "Bearer token-\(credential)"
  }

  func refresh(_ credential: Int) async throws -> Int {
    refreshes.increment()
    try await gate.wait()
    if let failure { throw failure }
    return credential + 1
  }
}

/// 401 unless the request carries `Bearer token-<valid>`; with a clock, each 401 comes 1 s
/// after its request, so that parallel requests are all rejected together.
private func server(
  acceptingToken valid: Int,
  clock: ManualClock? = nil,
  requests: Recorder<String>? = nil
) -> StubTransport {
  StubTransport(clock: clock ?? ManualClock()) { request, _ in
    let authorization = request.headers["Authorization"] ?? "none"
    requests?.append(authorization)
    return authorization == "Bearer token-\(valid)"
      ? .item(1) : .status(401, delay: clock == nil ? .immediate : .after(.seconds(1)))
  }
}

@Suite("Authentication", .timeLimit(.minutes(1)))
struct AuthenticationTests {
  @Test("the credential is added to every request")
  func credentialAdded() async throws {
    let transport = server(acceptingToken: 0)
    let interceptor = AuthenticationInterceptor(authenticator: TokenAuthenticator(), credential: 0)
    _ = try await makeHandler(transport, authentication: interceptor).request(TestAPI.item(id: 1))
    #expect(transport.requests.first?.headers["Authorization"] == "Bearer token-0")
  }

  @Test("6 parallel 401s cause 1 refresh, and each request is retried once with the new credential")
  func oneRefreshForAll() async throws {
    let gate = Gate()
    let authenticator = TokenAuthenticator(gate: gate)
    let requests = Recorder<String>()
    let clock = ManualClock()
    let transport = server(acceptingToken: 1, clock: clock, requests: requests)
    let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: 0)
    let handler = makeHandler(transport, retryPolicy: .never, authentication: interceptor)
    let tasks = (0..<6).map { id in Task { try await handler.request(TestAPI.item(id: id)) } }
    await transport.waitForRequests(6)
    await clock.waitForSleepers(count: 6)
    clock.advance(by: .seconds(1))  // six 401s at once
    await authenticator.refreshes.wait(untilAtLeast: 1)
    await gate.waitForWaiters(1)
    gate.open()
    for task in tasks { #expect(try await task.value.status == 200) }
    #expect(authenticator.refreshes.value == 1)
    #expect(interceptor.generation == 1)
    #expect(requests.values.filter { $0 == "Bearer token-0" }.count == 6)
    #expect(requests.values.filter { $0 == "Bearer token-1" }.count == 6)
    #expect(transport.requestCount == 12)
  }

  @Test("a request rejected again after the refresh fails with the 401, with no second refresh")
  func retriedOnce() async {
    let authenticator = TokenAuthenticator()
    let transport = server(acceptingToken: 99)
    let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: 0)
    let result = await send(makeHandler(transport, authentication: interceptor), TestAPI.item(id: 1)).value
    #expect(result.statusCode == 401)
    #expect(authenticator.refreshes.value == 1)
    #expect(transport.requestCount == 2)
  }

  @Test("a failed refresh fails every waiting request with a typed error")
  func failedRefresh() async {
    let gate = Gate()
    let authenticator = TokenAuthenticator(gate: gate, failure: "expired refresh token")
    let clock = ManualClock()
    let transport = server(acceptingToken: 1, clock: clock)
    let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: 0)
    let handler = makeHandler(transport, authentication: interceptor)
    let tasks = (0..<4).map { id in
      send(handler, TestAPI.item(id: id))
    }
    await transport.waitForRequests(4)
    await clock.waitForSleepers(count: 4)
    clock.advance(by: .seconds(1))
    await gate.waitForWaiters(1)
    gate.open()
    for task in tasks {
      let result = await task.value
      guard case .failure(.authentication(.refreshFailed(let reason))) = result else {
        Issue.record("expected a failed refresh, got \(result)")
        continue
      }
      #expect(reason.contains("expired refresh token"))
    }
    #expect(authenticator.refreshes.value == 1)
    #expect(interceptor.credential == 0)
  }

  @Test("six 401s together while the refresh fails at once: one refresh, and all six fail with its error (100 rounds)")
  func failedRefreshEndsTheBurst() async {
    for round in 0..<100 {
      let authenticator = TokenAuthenticator(failure: "revoked")
      let clock = ManualClock()
      let transport = server(acceptingToken: 1, clock: clock)
      let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: 0)
      let handler = makeHandler(transport, retryPolicy: .never, authentication: interceptor)
      let tasks = (0..<6).map { id in send(handler, TestAPI.item(id: id)) }
      await transport.waitForRequests(6)
      await clock.waitForSleepers(count: 6)
      clock.advance(by: .seconds(1))  // six 401s at once
      for task in tasks {
        let result = await task.value
        guard case .failure(.authentication(.refreshFailed(let reason))) = result else {
          Issue.record("round \(round): expected the refresh's failure, got \(result)")
          continue
        }
        #expect(reason.contains("revoked"))
      }
      #expect(authenticator.refreshes.value == 1, "round \(round)")
      #expect(transport.requestCount == 6, "round \(round): no request was sent again")
      #expect(interceptor.credential == 0)
    }
  }

  @Test("after a failed refresh, a request sent later and rejected starts a new refresh")
  func laterRejectionRefreshesAgain() async {
    let authenticator = TokenAuthenticator(failure: "revoked")
    let transport = server(acceptingToken: 1)
    let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: 0)
    let handler = makeHandler(transport, retryPolicy: .never, authentication: interceptor)
    for expected in 1...2 {
      let result = await send(handler, TestAPI.item(id: expected)).value
      guard case .failure(.authentication(.refreshFailed)) = result else {
        Issue.record("expected the refresh's failure, got \(result)")
        return
      }
      #expect(authenticator.refreshes.value == expected)
    }
  }

  @Test("refreshing over and over within the window stops with an error")
  func refreshLoop() async {
    let clock = ManualClock()
    let authenticator = TokenAuthenticator()
    let transport = server(acceptingToken: -1)  // rejects every token
    let interceptor = AuthenticationInterceptor(
      authenticator: authenticator,
      credential: 0,
      refreshWindow: .seconds(30),
      maximumRefreshes: 3,
      now: clock.dateProvider
    )
    let handler = makeHandler(transport, authentication: interceptor)
    var results: [Result<HTTPResponse, NetworkError>] = []
    for id in 0..<4 {
      results.append(
        await send(handler, TestAPI.item(id: id))
          .value
      )
      clock.advance(by: .seconds(1))
    }
    #expect(results.prefix(3).allSatisfy { $0.statusCode == 401 })
    guard case .failure(.authentication(.excessiveRefresh)) = results[3] else {
      Issue.record("expected excessive refresh, got \(results[3])")
      return
    }
    #expect(authenticator.refreshes.value == 3)

    // Once the window has passed, refreshing is allowed again.
    clock.advance(by: .seconds(30))
    _ = await send(handler, TestAPI.item(id: 9)).value
    #expect(authenticator.refreshes.value == 4)
  }

  @Test("a request cancelled while waiting for the refresh ends at once; the refresh still serves the others")
  func cancelledWhileRefreshing() async throws {
    let gate = Gate()
    let authenticator = TokenAuthenticator(gate: gate)
    let clock = ManualClock()
    let transport = server(acceptingToken: 1, clock: clock)
    let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: 0)
    let handler = makeHandler(transport, authentication: interceptor)
    let cancelled = send(handler, TestAPI.item(id: 1))
    let kept = Task { try await handler.request(TestAPI.item(id: 2)) }
    await transport.waitForRequests(2)
    await clock.waitForSleepers(count: 2)
    clock.advance(by: .seconds(1))
    await gate.waitForWaiters(1)
    cancelled.cancel()
    let result = await cancelled.value
    guard case .failure(.cancelled) = result else {
      Issue.record("expected cancelled, got \(result)")
      return
    }
    gate.open()
    #expect(try await kept.value.status == 200)
  }
}

@Suite("Authentication under load", .timeLimit(.minutes(1)))
struct AuthenticationStressTests {
  @Test("hundreds of concurrent requests rejected at random moments cause exactly one refresh per rejected credential")
  func oneRefreshUnderLoad() async throws {
    for round in 0..<10 {
      let authenticator = TokenAuthenticator()
      let transport = server(acceptingToken: 1)
      let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: 0)
      let handler = makeHandler(transport, retryPolicy: .never, authentication: interceptor)
      let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
        for id in 0..<200 {
          group.addTask {
            if id % 7 == 0 { await Task.yield() }
            return try await handler.request(TestAPI.item(id: id)).status
          }
        }
        var statuses: [Int] = []
        for try await status in group { statuses.append(status) }
        return statuses
      }
      #expect(statuses.count == 200 && statuses.allSatisfy { $0 == 200 }, "round \(round)")
      #expect(authenticator.refreshes.value == 1, "round \(round)")
      #expect(interceptor.generation == 1)
      let rejected = transport.requests.filter { $0.headers["Authorization"] == "Bearer token-0" }.count
      #expect(transport.requestCount == 200 + rejected, "each rejected request was sent exactly once more")
    }
  }
}
