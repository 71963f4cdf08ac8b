import KilnQuery
import KilnTesting
import Testing

@Suite("synchronize(with:)", .timeLimit(.minutes(1)))
struct SynchronizingQueryTests {
  @Test("runs both queries at the same time")
  func concurrent() async throws {
    let user = SpyQuery<String, any Error>(.success("ada"))
    let settings = SpyQuery<Int, any Error>(.success(3))
    user.hold()
    settings.hold()
    let load = Task { await user.synchronize(with: settings).load() }

    // Both loads are in flight at once while neither can finish.
    await user.waitForLoads(1)
    await settings.waitForLoads(1)
    #expect(user.inFlightCount == 1)
    #expect(settings.inFlightCount == 1)

    user.release()
    settings.release()
    let (name, count) = await load.value
    #expect(try name.get() == "ada")
    #expect(try count.get() == 3)
  }

  @Test("delivers both outcomes in one value, also when one fails")
  func bothOutcomes() async throws {
    let query = TypedQuery(outcome: .failure(.offline)).synchronize(with: AnyQuery<String, any Error> { "ok" })
    let (first, second) = await query.load()  // Failure == Never
    #expect(first == .failure(.offline))
    #expect(try second.get() == "ok")
  }

  @Test("cancelling the caller cancels both loads")
  func cancellation() async {
    let first = SpyQuery<Int, any Error>(.success(1))
    let second = SpyQuery<Int, any Error>(.success(2))
    first.hold()
    second.hold()
    let load = Task { await first.synchronize(with: second).load() }
    await first.waitForLoads(1)
    await second.waitForLoads(1)

    load.cancel()
    let (a, b) = await load.value

    #expect(a.failure is CancellationError)
    #expect(b.failure is CancellationError)
    #expect(first.cancelledCount == 1)
    #expect(second.cancelledCount == 1)
  }
}
