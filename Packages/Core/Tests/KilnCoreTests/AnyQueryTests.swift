import KilnCore
import KilnTesting
import Testing

private enum APIError: Error, Equatable {
  case offline
  case status(Int)
}

private struct TypedSource: Query {
  let outcome: Result<Int, APIError>
  func load() async throws(APIError) -> Int { try outcome.get() }
}

@Suite("AnyQuery", .timeLimit(.minutes(1)))
struct AnyQueryTests {
  @Test("a closure with `any Error` needs no annotation")
  func untypedClosure() async throws {
    let query = AnyQuery<Int, any Error> { 21 * 2 }
    #expect(try await query.load() == 42)

    let failing = AnyQuery<Int, any Error> { throw TestError("boom") }
    await #expect(throws: TestError("boom")) { try await failing.load() }
  }

  @Test("a closure annotated with a typed throws keeps the type")
  func typedClosure() async {
    let query = AnyQuery { () async throws(APIError) -> Int in throw .status(503) }
    // The static type is AnyQuery<Int, APIError>, so `error` needs no cast.
    let result: Result<Int, APIError> = await query.result()
    #expect(result == .failure(.status(503)))
  }

  @Test("a closure that cannot fail gives Failure == Never")
  func neverFailing() async {
    let query = AnyQuery<String, Never> { "ok" }
    let value: String = await query.load()  // no `try`
    #expect(value == "ok")
  }

  @Test("erasing a typed query preserves its failure type and value")
  func erasingPreservesTypedFailure() async {
    let erased: AnyQuery<Int, APIError> = TypedSource(outcome: .failure(.offline)).eraseToAnyQuery()
    do {
      _ = try await erased.load()
      Issue.record("expected a failure")
    } catch {
      #expect(error == .offline)
    }
    #expect(await AnyQuery(TypedSource(outcome: .success(9))).result() == .success(9))
  }

  @Test("erasing an AnyQuery again loads through the same body once")
  func doubleErasure() async throws {
    let spy = SpyQuery<Int, any Error>(.success(3))
    let once = AnyQuery(spy)
    let twice = AnyQuery(once).eraseToAnyQuery()
    #expect(try await twice.load() == 3)
    #expect(spy.loadCount == 1)
  }

  @Test("each load runs the body again: nothing is cached")
  func loadsEveryTime() async throws {
    let spy = SpyQuery<Int, any Error> { .success($0) }
    let query = AnyQuery(spy)
    #expect(try await query.load() == 1)
    #expect(try await query.load() == 2)
    #expect(spy.loadCount == 2)
  }

  @Test("success, failure and result factories")
  func factories() async {
    #expect(await AnyQuery<Int, APIError>.success(5).result() == .success(5))
    #expect(await AnyQuery<Int, APIError>.failure(.offline).result() == .failure(.offline))
    #expect(await AnyQuery<Int, APIError>(result: .failure(.status(404))).result() == .failure(.status(404)))
  }

  @Test("cancellation reaches the erased query")
  func cancellationPropagates() async {
    let spy = SpyQuery<Int, any Error>(.success(1))
    spy.hold()
    let query = AnyQuery(spy)
    let task = Task { try await query.load() }
    await spy.waitForLoads(1)
    task.cancel()
    await #expect(throws: CancellationError.self) { try await task.value }
  }
}
