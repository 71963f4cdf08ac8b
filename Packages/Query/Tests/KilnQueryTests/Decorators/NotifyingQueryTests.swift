import KilnQuery
import KilnTesting
import Testing

@Suite("notify(onSuccess:onFailure:)", .timeLimit(.minutes(1)))
struct NotifyingQueryTests {
  @Test("runs onSuccess with the value before returning it unchanged")
  func success() async throws {
    let seen = Recorder<Int>()
    let failures = Recorder<String>()
    let query = AnyQuery<Int, any Error> { 42 }.notify(
      onSuccess: { seen.append($0) },
      onFailure: { failures.append("\($0)") }
    )

    let value = try await query.load()

    #expect(value == 42)
    #expect(seen.values == [42])  // already recorded when the load returned
    #expect(failures.values.isEmpty)
  }

  @Test("runs onFailure with the typed error before rethrowing it unchanged")
  func failure() async {
    let seen = Recorder<APIError>()
    let successes = Recorder<Int>()
    let query = TypedQuery(outcome: .failure(.status(502))).notify(
      onSuccess: { successes.append($0) },
      onFailure: { seen.append($0) }  // `$0` is an APIError: no cast
    )

    #expect(await query.result() == .failure(.status(502)))
    #expect(seen.values == [.status(502)])
    #expect(successes.values.isEmpty)
  }

  @Test("either side effect may be left out")
  func optionalSideEffects() async throws {
    let seen = Recorder<Int>()
    #expect(try await AnyQuery<Int, any Error> { 1 }.notify(onFailure: { _ in seen.append(-1) }).load() == 1)
    #expect(
      await TypedQuery(outcome: .failure(.offline)).notify(onSuccess: { seen.append($0) }).result()
        == .failure(.offline))
    #expect(seen.values.isEmpty)
  }

  @Test("runs once per load")
  func oncePerLoad() async throws {
    let seen = Recorder<Int>()
    let query = SpyQuery<Int, any Error> { .success($0) }.notify(onSuccess: { seen.append($0) })
    _ = try await query.load()
    _ = try await query.load()
    #expect(seen.values == [1, 2])
  }
}
