import KilnQuery
import KilnTesting
import Testing

@Suite("retry(_:clock:onRetry:)", .timeLimit(.minutes(1)))
struct RetryingQueryTests {
  /// Checks that the sleeper in flight wakes exactly `delay` after it started sleeping.
  private func expectSleep(of delay: Duration, on clock: ManualClock) async {
    await clock.waitForSleepers(count: 1)
    if delay > .zero {
      clock.advance(by: delay - .nanoseconds(1))
      #expect(clock.sleeperCount == 1, "woke before \(delay)")
    }
    clock.advance(by: delay > .zero ? .nanoseconds(1) : .zero)
    #expect(clock.sleeperCount == 0, "still asleep after \(delay)")
  }

  @Test("with jitter disabled, the delays follow the schedule exactly")
  func exactSchedule() async throws {
    let clock = ManualClock()
    let spy = SpyQuery<Int, any Error>(results: [
      .failure(TestError("1")), .failure(TestError("2")), .failure(TestError("3")), .failure(TestError("4")),
      .success(42),
    ])
    let delays = Recorder<Duration>()
    let policy = RetryPolicy<any Error>.exponential(
      maxAttempts: 5,
      initial: .milliseconds(250),
      multiplier: 2,
      maximum: .seconds(1),
      jitter: .none
    )
    let load = Task { try await spy.retry(policy, clock: clock) { _, _, delay in delays.append(delay) }.load() }

    for delay in [Duration.milliseconds(250), .milliseconds(500), .seconds(1), .seconds(1)] {
      await expectSleep(of: delay, on: clock)
    }

    #expect(try await load.value == 42)
    #expect(spy.loadCount == 5)
    #expect(delays.values == [.milliseconds(250), .milliseconds(500), .seconds(1), .seconds(1)])
    #expect(clock.now.offset == .milliseconds(2_750))
  }

  @Test("with jitter, the delays come from the injected random source and stay within bounds")
  func jitteredSchedule() async throws {
    let clock = ManualClock()
    let spy = SpyQuery<Int, APIError>(results: [.failure(.offline), .failure(.offline), .success(1)])
    let policy = RetryPolicy<APIError>.exponential(
      maxAttempts: 3,
      initial: .seconds(2),
      jitter: .full(random: { 0.75 })
    )
    let delays = Recorder<Duration>()
    let load = Task { await spy.retry(policy, clock: clock) { _, _, delay in delays.append(delay) }.result() }

    await expectSleep(of: .milliseconds(1_500), on: clock)  // 2 s × 0.75
    await expectSleep(of: .seconds(3), on: clock)  // 4 s × 0.75

    #expect(await load.value == .success(1))
    #expect(delays.values.allSatisfy { $0 >= .zero && $0 <= .seconds(4) })
  }

  @Test("after the last attempt, the last failure is reported")
  func exhausted() async {
    let spy = SpyQuery<Int, APIError>(results: [.failure(.status(500)), .failure(.status(502)), .failure(.status(503))])
    let query = spy.retry(.constant(maxAttempts: 3, delay: .zero), clock: ManualClock())
    #expect(await query.result() == .failure(.status(503)))
    #expect(spy.loadCount == 3)
  }

  @Test("a non-retryable failure stops at once, without sleeping")
  func nonRetryable() async {
    let clock = ManualClock()
    let spy = SpyQuery<Int, APIError>(.failure(.status(404)))
    let asked = Recorder<Int>()
    let policy = RetryPolicy<APIError>.constant(maxAttempts: 5, delay: .seconds(1)) { failure, attempt in
      asked.append(attempt)
      return failure != .status(404)
    }

    #expect(await spy.retry(policy, clock: clock).result() == .failure(.status(404)))
    #expect(spy.loadCount == 1)
    #expect(asked.values == [1])
    #expect(clock.now.offset == .zero)
  }

  @Test("shouldRetry sees each failure with the number of the attempt that failed")
  func predicateArguments() async {
    let seen = Recorder<String>()
    let spy = SpyQuery<Int, APIError>(results: [.failure(.offline), .failure(.status(503)), .failure(.decoding)])
    let policy = RetryPolicy<APIError>(maxAttempts: 10, backoff: .immediate) { failure, attempt in
      seen.append("\(attempt): \(failure)")
      return failure != .decoding
    }
    #expect(await spy.retry(policy, clock: ManualClock()).result() == .failure(.decoding))
    #expect(seen.values == ["1: offline", "2: status(503)", "3: decoding"])
  }

  @Test("a cancelled task stops retrying at once, in the middle of a delay")
  func cancelDuringDelay() async {
    let clock = ManualClock()
    let spy = SpyQuery<Int, any Error>(.failure(TestError("down")))
    let load = Task { try await spy.retry(.constant(maxAttempts: 5, delay: .seconds(60)), clock: clock).load() }
    await clock.waitForSleepers(count: 1)

    load.cancel()

    await #expect(throws: CancellationError.self) { try await load.value }
    #expect(spy.loadCount == 1)
    #expect(clock.sleeperCount == 0)
  }

  @Test("a cancelled task with a typed failure stops with the last failure")
  func cancelTyped() async {
    let clock = ManualClock()
    let spy = SpyQuery<Int, APIError>(.failure(.offline))
    let load = Task { await spy.retry(.constant(maxAttempts: 5, delay: .seconds(60)), clock: clock).result() }
    await clock.waitForSleepers(count: 1)
    load.cancel()
    #expect(await load.value == .failure(.offline))
    #expect(spy.loadCount == 1)
  }

  @Test("a load cancelled during an attempt is not retried")
  func cancelDuringAttempt() async {
    // The held spy returns its scripted failure when cancelled: retryable by the policy, but
    // the task is cancelled, so retrying stops.
    let spy = SpyQuery<Int, APIError>(.failure(.offline))
    spy.hold()
    let load = Task { await spy.retry(.constant(maxAttempts: 5, delay: .zero), clock: ManualClock()).result() }
    await spy.waitForLoads(1)
    load.cancel()
    #expect(await load.value == .failure(.offline))
    #expect(spy.loadCount == 1)
    #expect(spy.cancelledCount == 1)
  }

  @Test("a delay override such as Retry-After replaces the backoff")
  func overrideInLoop() async {
    let clock = ManualClock()
    let spy = SpyQuery<Int, APIError>(results: [.failure(.status(429)), .success(9)])
    var policy = RetryPolicy<APIError>.exponential(maxAttempts: 2, initial: .seconds(1), jitter: .none)
    policy.delayOverride = { failure, _ in failure == .status(429) ? .seconds(30) : nil }
    let load = Task { await spy.retry(policy, clock: clock).result() }

    await expectSleep(of: .seconds(30), on: clock)

    #expect(await load.value == .success(9))
  }

  @Test("success on the first attempt neither retries nor sleeps")
  func firstAttemptSucceeds() async throws {
    let clock = ManualClock()
    let retries = Recorder<Int>()
    let spy = SpyQuery<Int, any Error>(.success(1))
    #expect(try await spy.retry(.default, clock: clock) { _, attempt, _ in retries.append(attempt) }.load() == 1)
    #expect(retries.values.isEmpty)
    #expect(spy.loadCount == 1)
  }
}
