import KilnQuery
import KilnTesting
import Testing

@Suite("fallback(_:) and secondChance(_:)", .timeLimit(.minutes(1)))
struct FallbackTests {
  private static let outcomes: [(Result<Int, APIError>, Result<Int, APIError>)] = [
    (.success(1), .success(2)),
    (.success(1), .failure(.status(500))),
    (.failure(.offline), .success(2)),
    (.failure(.offline), .failure(.status(500))),
  ]

  @Test("fallback: the primary's value, else the secondary's outcome", arguments: outcomes)
  func fallbackOutcome(primary: Result<Int, APIError>, secondary: Result<Int, APIError>) async {
    let query = TypedQuery(outcome: primary).fallback(TypedQuery(outcome: secondary))
    let expected = if case .success = primary { primary } else { secondary }
    #expect(await query.result() == expected)
  }

  @Test(
    "secondChance: the primary's value, else the secondary's value, else the primary's failure", arguments: outcomes)
  func secondChanceOutcome(primary: Result<Int, APIError>, secondary: Result<Int, APIError>) async {
    let query = TypedQuery(outcome: primary).secondChance(TypedQuery(outcome: secondary))
    let expected =
      switch (primary, secondary) {
      case (.success, _): primary
      case (.failure, .success): secondary
      case (.failure, .failure): primary
      }
    #expect(await query.result() == expected)
  }

  @Test("when both fail, fallback reports the secondary's error and secondChance the primary's")
  func whichErrorWins() async {
    let primary = SpyQuery<Int, any Error>(.failure(TestError("primary")))
    let secondary = SpyQuery<Int, any Error>(.failure(TestError("secondary")))

    await #expect(throws: TestError("secondary")) { try await primary.fallback(secondary).load() }
    await #expect(throws: TestError("primary")) { try await primary.secondChance(secondary).load() }
    #expect(primary.loadCount == 2)
    #expect(secondary.loadCount == 2)
  }

  @Test("the secondary never runs when the primary succeeds")
  func secondaryNotRunOnSuccess() async throws {
    let primary = SpyQuery<Int, any Error>(.success(1))
    let secondary = SpyQuery<Int, any Error>(.success(2))

    #expect(try await primary.fallback(secondary).load() == 1)
    #expect(try await primary.secondChance(secondary).load() == 1)
    #expect(secondary.loadCount == 0)
  }

  @Test("fallback takes the secondary's failure type, secondChance keeps the primary's")
  func failureTypes() async {
    let typedPrimary = TypedQuery(outcome: .failure(.offline))
    let untypedSecondary = AnyQuery<Int, any Error>.failure(TestError("cache miss"))

    // secondChance: Failure == APIError although the secondary throws `any Error`.
    let kept: Result<Int, APIError> = await typedPrimary.secondChance(untypedSecondary).result()
    #expect(kept == .failure(.offline))

    // fallback: Failure == the secondary's; a typed secondary makes the pipeline typed.
    let cacheFirst = untypedSecondary.fallback(TypedQuery(outcome: .failure(.status(503))))
    let taken: Result<Int, APIError> = await cacheFirst.result()
    #expect(taken == .failure(.status(503)))
  }

  @Test("fallbacks chain: the first source that succeeds wins")
  func chains() async throws {
    let memory = SpyQuery<String, any Error>(.failure(TestError("miss")))
    let disk = SpyQuery<String, any Error>(.failure(TestError("miss")))
    let network = SpyQuery<String, any Error>(.success("fresh"))
    let never = SpyQuery<String, any Error>(.success("unused"))

    #expect(try await memory.fallback(disk).fallback(network).fallback(never).load() == "fresh")
    #expect([memory.loadCount, disk.loadCount, network.loadCount, never.loadCount] == [1, 1, 1, 0])
  }
}
