import KilnQuery
import KilnTesting
import Testing

private struct ArticleDTO: Sendable, Equatable {
  let id: Int
  let title: String
}

private struct Article: Sendable, Equatable {
  let id: Int
  let title: String

  init(dto: ArticleDTO) {
    id = dto.id
    title = dto.title.uppercased()
  }
}

@Suite("map, map(with:), mapError, flatMap and convert(map:)", .timeLimit(.minutes(1)))
struct TransformTests {
  // MARK: map

  @Test("map transforms the value and keeps the failure type")
  func mapTransformsValue() async throws {
    let untyped = AnyQuery<Int, any Error> { 20 }.map { $0 + 1 }
    #expect(try await untyped.load() == 21)

    let typed: MappingQuery<TypedQuery, String> = TypedQuery(outcome: .success(4)).map { "#\($0)" }
    #expect(await typed.result() == .success("#4"))
  }

  @Test("map passes failures through without calling the transform")
  func mapPassesFailures() async {
    let calls = Recorder<Int>()
    let typed = TypedQuery(outcome: .failure(.offline)).map { value -> Int in
      calls.append(value)
      return value
    }
    #expect(await typed.result() == .failure(.offline))
    #expect(calls.values.isEmpty)

    let untyped = AnyQuery<Int, any Error>.failure(TestError("down")).map { $0 * 2 }
    await #expect(throws: TestError("down")) { try await untyped.load() }
  }

  // MARK: map(with:)

  @Test("map(with:) accepts an initializer, like Bricks' pipelines")
  func mapWithInitializer() async throws {
    let network = AnyQuery<ArticleDTO, any Error> { ArticleDTO(id: 1, title: "kiln") }
    let articles = network.map(with: Article.init)
    #expect(try await articles.load() == Article(dto: ArticleDTO(id: 1, title: "kiln")))
  }

  @Test("map(with:) maps a value into a new Result, which can be a failure")
  func mapWithResult() async throws {
    let typed = TypedQuery(outcome: .success(404)).map(with: { code -> Result<String, APIError> in
      code >= 400 ? .failure(.status(code)) : .success("ok")
    })
    #expect(await typed.result() == .failure(.status(404)))

    let untyped = AnyQuery<Int, any Error> { 200 }.map(with: { code -> Result<String, any Error> in
      code >= 400 ? .failure(TestError("bad status")) : .success("ok")
    })
    #expect(try await untyped.load() == "ok")
  }

  @Test("map(with:) turns a thrown error into the load's failure, typed or not")
  func mapWithThrowing() async {
    let untyped = AnyQuery<Int, any Error> { 1 }.map(with: { _ -> Int in throw TestError("decode") })
    await #expect(throws: TestError("decode")) { try await untyped.load() }

    // A typed throwing closure needs its annotation (Swift infers `any Error` otherwise).
    let typed = TypedQuery(outcome: .success(1)).map(with: { (_: Int) throws(APIError) -> Int in
      throw .decoding
    })
    #expect(await typed.result() == .failure(.decoding))
  }

  @Test("map(with:) is not called when the upstream fails")
  func mapWithSkippedOnFailure() async {
    let calls = Recorder<Int>()
    let query = TypedQuery(outcome: .failure(.offline)).map(with: { (value: Int) -> Result<Int, APIError> in
      calls.append(value)
      return .success(value)
    })
    #expect(await query.result() == .failure(.offline))
    #expect(calls.values.isEmpty)
  }

  // MARK: mapError

  @Test("mapError turns an untyped failure into a typed one")
  func mapErrorToTyped() async {
    let query = AnyQuery<Int, any Error>.failure(TestError("offline")).mapError { error -> APIError in
      (error as? TestError) == TestError("offline") ? .offline : .decoding
    }
    // The static type carries APIError: no cast needed.
    let result: Result<Int, APIError> = await query.result()
    #expect(result == .failure(.offline))
  }

  @Test("mapError leaves successes alone and is not called for them")
  func mapErrorKeepsSuccess() async {
    let calls = Recorder<APIError>()
    let query = TypedQuery(outcome: .success(3)).mapError { error -> TestError in
      calls.append(error)
      return TestError("mapped")
    }
    #expect(await query.result() == .success(3))
    #expect(calls.values.isEmpty)
  }

  @Test("mapError maps one typed failure into another")
  func mapErrorTypedToTyped() async {
    let query = TypedQuery(outcome: .failure(.status(503))).mapError { error -> TestError in
      TestError("\(error)")
    }
    #expect(await query.result() == .failure(TestError("status(503)")))
  }

  // MARK: flatMap

  @Test("flatMap loads a second query built from the first one's value")
  func flatMapChains() async throws {
    let user = AnyQuery<Int, any Error> { 7 }
    let posts = user.flatMap { id in AnyQuery<[String], any Error> { ["post by \(id)"] } }
    #expect(try await posts.load() == ["post by 7"])

    let typed = TypedQuery(outcome: .success(2)).flatMap { value in TypedQuery(outcome: .success(value * 10)) }
    #expect(await typed.result() == .success(20))
  }

  @Test("flatMap does not build the second query when the first fails")
  func flatMapStopsOnFirstFailure() async {
    let built = Recorder<Int>()
    let query = TypedQuery(outcome: .failure(.offline)).flatMap { value in
      built.append(value)
      return TypedQuery(outcome: .success(value))
    }
    #expect(await query.result() == .failure(.offline))
    #expect(built.values.isEmpty)
  }

  @Test("flatMap reports the second query's failure")
  func flatMapSecondFailure() async {
    let query = TypedQuery(outcome: .success(1)).flatMap { _ in TypedQuery(outcome: .failure(.status(500))) }
    #expect(await query.result() == .failure(.status(500)))
  }

  // MARK: convert(map:)

  @Test("convert(map:) maps the whole result: a failure can become a value")
  func convertRecovers() async {
    let query = TypedQuery(outcome: .failure(.offline)).convert { result -> Result<String, Never> in
      switch result {
      case .success(let value): .success("value \(value)")
      case .failure(let error): .success("default after \(error)")
      }
    }
    let value: String = await query.load()  // Failure == Never: no `try`
    #expect(value == "default after offline")
  }

  @Test("convert(map:) maps the whole result: a value can become a failure")
  func convertRejects() async {
    let query = AnyQuery<Int, any Error> { -1 }.convert { result -> Result<Int, APIError> in
      guard case .success(let value) = result, value >= 0 else { return .failure(.decoding) }
      return .success(value)
    }
    #expect(await query.result() == .failure(.decoding))
  }

  @Test("every transform runs once per load and nothing is cached")
  func transformsRunPerLoad() async throws {
    let spy = SpyQuery<Int, any Error> { .success($0) }
    let query = spy.map { $0 * 100 }.map(with: { .success($0 + 1) })
    #expect(try await query.load() == 101)
    #expect(try await query.load() == 201)
    #expect(spy.loadCount == 2)
  }
}
