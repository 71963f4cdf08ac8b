import KilnQuery
import KilnTesting
import Testing

@Suite("RetryPolicy, RetryBackoff and RetryJitter")
struct RetryPolicyTests {
  @Test(
    "exponential backoff doubles from the initial delay up to the cap",
    arguments: [
      (1, Duration.milliseconds(500)), (2, .seconds(1)), (3, .seconds(2)), (4, .seconds(4)), (5, .seconds(8)),
      (6, .seconds(16)), (7, .seconds(30)), (8, .seconds(30)), (1_000_000, .seconds(30)),
    ]
  )
  func exponentialSchedule(retry: Int, expected: Duration) {
    #expect(RetryBackoff.exponential().delay(beforeRetry: retry) == expected)
  }

  @Test("a fractional multiplier grows the delay by that factor")
  func fractionalMultiplier() {
    let backoff = RetryBackoff.exponential(initial: .seconds(1), multiplier: 1.5, maximum: .seconds(10))
    #expect(backoff.delay(beforeRetry: 2) == .seconds(1.5))
    #expect(backoff.delay(beforeRetry: 3) == .seconds(2.25))
    #expect(backoff.delay(beforeRetry: 50) == .seconds(10))
  }

  @Test("constant and immediate backoffs never change")
  func constantSchedule() {
    for retry in [1, 2, 10, 1_000] {
      #expect(RetryBackoff.constant(.seconds(2)).delay(beforeRetry: retry) == .seconds(2))
      #expect(RetryBackoff.immediate.delay(beforeRetry: retry) == .zero)
    }
  }

  @Test("no jitter keeps the delay exact")
  func noJitter() {
    #expect(RetryJitter.none.apply(to: .milliseconds(1_234)) == .milliseconds(1_234))
  }

  @Test(
    "full jitter scales the delay by the random source, clamped to 0 … delay",
    arguments: [(0.0, Duration.zero), (0.25, .seconds(1)), (1.0, .seconds(4)), (-3.0, .zero), (7.0, .seconds(4))]
  )
  func fullJitter(random: Double, expected: Duration) {
    #expect(RetryJitter.full(random: { random }).apply(to: .seconds(4)) == expected)
  }

  @Test(
    "equal jitter stays within delay/2 … delay",
    arguments: [(0.0, Duration.seconds(2)), (0.5, .seconds(3)), (1.0, .seconds(4)), (.nan, .seconds(4))]
  )
  func equalJitter(random: Double, expected: Duration) {
    #expect(RetryJitter.equal(random: { random }).apply(to: .seconds(4)) == expected)
  }

  @Test("system-random jitter stays within its bounds and does vary")
  func systemRandomBounds() {
    let delay = Duration.seconds(8)
    let full = (0..<1_000).map { _ in RetryJitter.full.apply(to: delay) }
    let equal = (0..<1_000).map { _ in RetryJitter.equal.apply(to: delay) }
    #expect(full.allSatisfy { $0 >= .zero && $0 <= delay })
    #expect(equal.allSatisfy { $0 >= delay / 2 && $0 <= delay })
    #expect(Set(full).count > 1)
    #expect(Set(equal).count > 1)
  }

  @Test("the default policy: 3 attempts, 0.5 s doubling up to 30 s, full jitter")
  func defaults() {
    let policy = RetryPolicy<any Error>.default
    #expect(policy.maxAttempts == 3)
    #expect(policy.backoff == .exponential(initial: .milliseconds(500), multiplier: 2, maximum: .seconds(30)))
    #expect(policy.jitter.description == "full")
    #expect(policy.allowsRetry(after: TestError("x"), attempt: 2))
    #expect(!policy.allowsRetry(after: TestError("x"), attempt: 3))
    #expect(!policy.allowsRetry(after: CancellationError(), attempt: 1))
    #expect(RetryPolicy<any Error>.never.maxAttempts == 1)
  }

  @Test("a delay override wins over backoff and jitter, and is never negative")
  func delayOverride() {
    var policy = RetryPolicy<APIError>.exponential(maxAttempts: 5, initial: .seconds(1), jitter: .none)
    policy.delayOverride = { failure, _ in
      switch failure {
      case .status(429): .seconds(7)
      case .status(503): .seconds(-1)
      default: nil
      }
    }
    #expect(policy.delay(after: .status(429), attempt: 1) == .seconds(7))
    #expect(policy.delay(after: .status(503), attempt: 1) == .zero)
    #expect(policy.delay(after: .offline, attempt: 2) == .seconds(2))
  }

  @Test("maxAttempts below 1 is rejected, never a silent no-op")
  func rejectsZeroAttempts() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = RetryPolicy<any Error>(maxAttempts: 0)
    }
    let standardError = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(standardError.contains("a retry policy needs at least 1 attempt, got maxAttempts: 0"))
  }
}
