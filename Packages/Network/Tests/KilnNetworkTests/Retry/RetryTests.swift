import Foundation
import KilnNetwork
import KilnTesting
import Testing

@Suite("Retries", .timeLimit(.minutes(1)))
struct RetryTests {
  /// Sends `target` on `handler` in a task.
  private func start(
    _ handler: NetworkHandler,
    _ target: TestAPI = .item(id: 1)
  ) -> Task<Result<HTTPResponse, NetworkError>, Never> {
    send(handler, target)
  }

  /// Advances `clock` in `steps` after each sleeper appears, checking that the next request
  /// goes out exactly when the step is done.
  private func expectRetries(
    after delays: [Duration],
    clock: ManualClock,
    transport: StubTransport
  ) async {
    for (index, delay) in delays.enumerated() {
      await clock.waitForSleepers(count: 1)
      if delay > .milliseconds(1) {
        clock.advance(by: delay - .milliseconds(1))
        #expect(transport.requestCount == index + 1, "retry \(index + 1) went out before \(delay)")
        clock.advance(by: .milliseconds(1))
      } else {
        clock.advance(by: delay)
      }
      await transport.waitForRequests(index + 2)
    }
  }

  @Test("by default 3 attempts in all, waiting exactly 0.5 s then 1 s without jitter; the last error is reported")
  func defaultAttempts() async {
    let clock = ManualClock()
    let transport = StubTransport(replies: [.status(503)])
    let request = start(makeHandler(transport, clock: clock), .item(id: 1))
    await expectRetries(after: [.milliseconds(500), .seconds(1)], clock: clock, transport: transport)
    let result = await request.value
    guard case .failure(.status(let response)) = result else {
      Issue.record("expected the last status error, got \(result)")
      return
    }
    #expect(response.status == 503)
    #expect(transport.requestCount == 3)
    #expect(NetworkHandler.RetryPolicy.default.maxAttempts == 3)
  }

  @Test("the backoff doubles and is capped")
  func backoffCapped() async throws {
    let clock = ManualClock()
    let transport = StubTransport(replies: [.status(500), .status(500), .status(500), .status(500), .item(1)])
    let policy = NetworkHandler.RetryPolicy(
      maxAttempts: 5,
      backoff: .exponential(initial: .milliseconds(500), multiplier: 2, maximum: .milliseconds(1500)),
      jitter: .none
    )
    let request = start(makeHandler(transport, clock: clock, retryPolicy: policy))
    await expectRetries(
      after: [.milliseconds(500), .seconds(1), .milliseconds(1500), .milliseconds(1500)],
      clock: clock,
      transport: transport
    )
    #expect(try await request.value.get().status == 200)
  }

  @Test("full jitter scales each delay by the injected random source")
  func jitter() {
    let policy = NetworkHandler.RetryPolicy(jitter: .full(random: { 0.25 }))
    let error = NetworkError.status(HTTPResponse(status: 503))
    #expect(policy.delay(after: error, attempt: 1, now: Date()) == .milliseconds(125))
    #expect(policy.delay(after: error, attempt: 2, now: Date()) == .milliseconds(250))
  }

  @Test("fewer than 1 attempt stops the program with the same message as KilnQuery's RetryPolicy")
  func invalidAttempts() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = NetworkHandler.RetryPolicy(maxAttempts: 0)
    }
    let standardError = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(standardError.contains("a retry policy needs at least 1 attempt, got maxAttempts: 0"))
  }

  @Test("setting maxAttempts below 1 later stops the program the same way")
  func invalidAttemptsSetLater() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      var policy = NetworkHandler.RetryPolicy()
      policy.maxAttempts = 0
    }
    let standardError = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(standardError.contains("a retry policy needs at least 1 attempt, got maxAttempts: 0"))
  }

  @Test("retryable statuses", arguments: [408, 429, 500, 502, 503, 504])
  func retryableStatus(status: Int) async throws {
    let clock = ManualClock()
    let transport = StubTransport(replies: [.status(status), .item(1)])
    let request = start(makeHandler(transport, clock: clock))
    await expectRetries(after: [.milliseconds(500)], clock: clock, transport: transport)
    #expect(try await request.value.get().status == 200)
  }

  @Test("other statuses are not retried", arguments: [400, 401, 403, 404, 409, 422, 501, 505])
  func nonRetryableStatus(status: Int) async {
    let transport = StubTransport(replies: [.status(status), .item(1)])
    let result = await start(makeHandler(transport)).value
    #expect(result.statusCode == status)
    #expect(transport.requestCount == 1)
  }

  @Test(
    "transient transport errors are retried",
    arguments: [TransportError.connectionRefused, .connectionLost, .timedOut]
  )
  func transientErrors(error: TransportError) async throws {
    let clock = ManualClock()
    let transport = StubTransport(replies: [.failure(error), .item(1)])
    let request = start(makeHandler(transport, clock: clock))
    await expectRetries(after: [.milliseconds(500)], clock: clock, transport: transport)
    #expect(try await request.value.get().status == 200)
  }

  @Test(
    "other transport errors are not retried",
    arguments: [TransportError.cannotFindHost, .secureConnectionFailed, .bodyTooLarge(limit: 1), .tooManyRedirects]
  )
  func permanentErrors(error: TransportError) async {
    let transport = StubTransport(replies: [.failure(error), .item(1)])
    _ = await start(makeHandler(transport)).value
    #expect(transport.requestCount == 1)
  }

  @Test("POST and PATCH are not retried by default")
  func unsafeMethodsNotRetried() async {
    for method in [HTTPMethod.post, .patch] {
      let transport = StubTransport(replies: [.status(503), .item(1)])
      let result = await start(makeHandler(transport), .custom(method: method)).value
      #expect(result.statusCode == 503)
      #expect(transport.requestCount == 1)
    }
  }

  @Test("POST is retried with an Idempotency-Key header, or when opted in")
  func postOptIn() async throws {
    let clock = ManualClock()
    let keyed = StubTransport(replies: [.status(503), .item(1)])
    let keyedRequest = start(
      makeHandler(keyed, clock: clock),
      .custom(method: .post, headers: ["Idempotency-Key": "abc"])
    )
    await expectRetries(after: [.milliseconds(500)], clock: clock, transport: keyed)
    #expect(try await keyedRequest.value.get().status == 200)

    var policy = NetworkHandler.RetryPolicy(jitter: .none)
    policy.retryableMethods.insert(.post)
    let optedIn = StubTransport(replies: [.status(503), .item(1)])
    let optedInRequest = start(makeHandler(optedIn, clock: clock, retryPolicy: policy), .custom(method: .post))
    await expectRetries(after: [.milliseconds(500)], clock: clock, transport: optedIn)
    #expect(try await optedInRequest.value.get().status == 200)
  }

  @Test("Retry-After in seconds is honoured instead of the backoff")
  func retryAfterSeconds() async throws {
    let clock = ManualClock()
    let transport = StubTransport(replies: [.status(429, headers: ["Retry-After": "7"]), .item(1)])
    let request = start(makeHandler(transport, clock: clock))
    await expectRetries(after: [.seconds(7)], clock: clock, transport: transport)
    #expect(try await request.value.get().status == 200)
  }

  @Test("Retry-After as an HTTP date is honoured against the injected date")
  func retryAfterDate() async throws {
    let clock = ManualClock()
    let retryAt = HTTPDate.format(clock.date.addingTimeInterval(12))
    let transport = StubTransport(replies: [.status(503, headers: ["Retry-After": retryAt]), .item(1)])
    let request = start(makeHandler(transport, clock: clock, now: clock.dateProvider))
    await expectRetries(after: [.seconds(12)], clock: clock, transport: transport)
    #expect(try await request.value.get().status == 200)
  }

  @Test("Retry-After is capped")
  func retryAfterCapped() async throws {
    let clock = ManualClock()
    let transport = StubTransport(replies: [.status(503, headers: ["Retry-After": "86400"]), .item(1)])
    var policy = NetworkHandler.RetryPolicy(jitter: .none)
    policy.maximumRetryAfter = .seconds(30)
    let request = start(makeHandler(transport, clock: clock, retryPolicy: policy))
    await expectRetries(after: [.seconds(30)], clock: clock, transport: transport)
    #expect(try await request.value.get().status == 200)
  }

  @Test(
    "a malformed Retry-After is ignored and the backoff used",
    arguments: ["soon", "-5", "1.5", "", "Mon, 32 Foo 2026 99:00:00 GMT", "5 s"]
  )
  func retryAfterMalformed(value: String) async throws {
    let response = HTTPResponse(status: 503, headers: ["Retry-After": value])
    #expect(NetworkHandler.RetryPolicy.retryAfter(in: response, now: Date()) == nil)
    let clock = ManualClock()
    let transport = StubTransport(replies: [.status(503, headers: ["Retry-After": value]), .item(1)])
    let request = start(makeHandler(transport, clock: clock))
    await expectRetries(after: [.milliseconds(500)], clock: clock, transport: transport)
    #expect(try await request.value.get().status == 200)
  }

  @Test("a Retry-After date in the past means no wait")
  func retryAfterPast() {
    let now = Date(timeIntervalSince1970: 1_000_000)
    let response = HTTPResponse(status: 503, headers: ["Retry-After": HTTPDate.format(now.addingTimeInterval(-60))])
    #expect(NetworkHandler.RetryPolicy.retryAfter(in: response, now: now) == .zero)
  }

  @Test("cancelling during a backoff ends the request at once with no further attempt")
  func cancelDuringBackoff() async {
    let clock = ManualClock()
    let transport = StubTransport(replies: [.status(503), .item(1)])
    let request = start(makeHandler(transport, clock: clock))
    await clock.waitForSleepers(count: 1)
    request.cancel()
    let result = await request.value
    guard case .failure(.cancelled) = result else {
      Issue.record("expected cancelled, got \(result)")
      return
    }
    clock.advance(by: .seconds(10))
    #expect(transport.requestCount == 1)
  }

  @Test("a retry budget shared by callers stops retries once spent, and successes refill it")
  func budget() async throws {
    let budget = RetryBudget(capacity: 2, tokensPerSuccess: 0.5)
    let policy = NetworkHandler.RetryPolicy(maxAttempts: 5, backoff: .immediate, jitter: .none, budget: budget)
    let failing = StubTransport(replies: [.status(503)])
    let first = makeHandler(failing, retryPolicy: policy)
    let second = makeHandler(failing, retryPolicy: policy)
    _ = await start(first).value  // 1 attempt + 2 retries: the budget is spent
    _ = await start(second).value  // no token: no retry
    #expect(failing.requestCount == 4)
    #expect(budget.availableTokens == 0)

    let succeeding = StubTransport(replies: [.item(1)])
    _ = try await makeHandler(succeeding, retryPolicy: policy).request(TestAPI.item(id: 1))
    _ = try await makeHandler(succeeding, retryPolicy: policy).request(TestAPI.item(id: 1))
    #expect(budget.availableTokens == 1)
    #expect(budget.withdraw())
    #expect(!budget.withdraw())
  }
}
