import KilnQuery
import KilnTesting
import Testing

@Suite("timeout(_:clock:)", .timeLimit(.minutes(1)))
struct TimeoutQueryTests {
  @Test("a load that finishes in time returns its value")
  func inTime() async throws {
    let clock = ManualClock()
    let query = AnyQuery<Int, any Error> { 5 }.timeout(.seconds(1), clock: clock)
    #expect(try await query.load() == 5)
    #expect(clock.now.offset == .zero)
  }

  @Test("a load still running at the limit times out and is cancelled")
  func timesOut() async {
    let clock = ManualClock()
    let spy = SpyQuery<Int, any Error>(.success(1))
    spy.hold()
    let load = Task { await spy.timeout(.seconds(10), clock: clock).result() }
    await spy.waitForLoads(1)
    await clock.waitForSleepers(count: 1)

    clock.advance(by: .seconds(10) - .nanoseconds(1))
    #expect(clock.sleeperCount == 1)
    clock.advance(by: .nanoseconds(1))

    let result = await load.value
    guard case .failure(.timedOut(let limit)) = result else {
      Issue.record("expected a timeout, got \(result)")
      return
    }
    #expect(limit == .seconds(10))
    await spy.waitForCompletions(1)
    #expect(spy.cancelledCount == 1)
  }

  @Test("the timeout fires on time even when the load ignores cancellation")
  func stubbornLoad() async {
    let clock = ManualClock()
    let stubborn = StubbornQuery(value: 1)
    let load = Task { await stubborn.timeout(.seconds(1), clock: clock).result() }
    await stubborn.waitForLoads(1)
    await clock.waitForSleepers(count: 1)

    clock.advance(by: .seconds(1))

    #expect(await load.value == .failure(.timedOut(after: .seconds(1))))
    #expect(stubborn.loadCount == 1)
    stubborn.finish()
  }

  @Test("the upstream's own failure arrives as .failed, with its type")
  func upstreamFailure() async {
    let query = TypedQuery(outcome: .failure(.status(500))).timeout(.seconds(1), clock: ManualClock())
    let result: Result<Int, QueryTimeoutError<APIError>> = await query.result()
    #expect(result == .failure(.failed(.status(500))))
    #expect(result.failure?.failure == .status(500))
  }

  @Test("cancelling the caller ends the load at once with .cancelled")
  func callerCancelled() async {
    let clock = ManualClock()
    let stubborn = StubbornQuery(value: 1)
    let load = Task { await stubborn.timeout(.seconds(60), clock: clock).result() }
    await stubborn.waitForLoads(1)

    load.cancel()

    #expect(await load.value == .failure(.cancelled))
    stubborn.finish()
  }

  @Test("the timer is cancelled when the load finishes first")
  func timerCancelled() async throws {
    let clock = ManualClock()
    let spy = SpyQuery<Int, any Error>(.success(3))
    spy.hold()
    let load = Task { try await spy.timeout(.seconds(5), clock: clock).load() }
    await clock.waitForSleepers(count: 1)
    spy.release()
    #expect(try await load.value == 3)
    await clock.waitForCancelledSleeps(1)
    #expect(clock.sleeperCount == 0)
    #expect(clock.now.offset == .zero)
  }
}
