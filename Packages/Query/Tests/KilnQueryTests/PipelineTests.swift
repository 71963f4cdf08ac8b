import Foundation
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
    title = dto.title
  }
}

@Suite("The Bricks composition", .timeLimit(.minutes(1)))
struct PipelineTests {
  @Test("cache.expiring(...).fallback(network.map(with:).store(into: cache)) works as in Bricks")
  func bricksPipeline() async throws {
    let now = ManualDate()
    let cache = SpyStorage<[Article]>(now: now.provider)
    let network = SpyQuery<[ArticleDTO], any Error> { call in .success([ArticleDTO(id: call, title: "news \(call)")]) }

    let articles =
      cache
      .expiring(validationPolicy: .maxAge(.seconds(300)), now: now.provider)
      .fallback(network.map(with: { dtos in dtos.map(Article.init) }).store(into: cache))

    // Empty cache: the network answers, and the cache is filled.
    #expect(try await articles.load() == [Article(dto: ArticleDTO(id: 1, title: "news 1"))])
    #expect(cache.savedValues.count == 1)
    #expect(cache.loadCount == 0)  // an empty cache is expired: never read

    // Fresh cache: no request.
    now.advance(by: .seconds(300))
    #expect(try await articles.load() == [Article(dto: ArticleDTO(id: 1, title: "news 1"))])
    #expect(network.loadCount == 1)
    #expect(cache.loadCount == 1)

    // Expired cache: a new request, saved again.
    now.advance(by: .seconds(1))
    #expect(try await articles.load() == [Article(dto: ArticleDTO(id: 2, title: "news 2"))])
    #expect(network.loadCount == 2)
    #expect(cache.value == [Article(dto: ArticleDTO(id: 2, title: "news 2"))])
  }

  @Test("with a typed network, the pipeline's failure is the network's type")
  func typedPipeline() async {
    let now = ManualDate()
    let cache = SpyStorage<[Article]>(now: now.provider)
    let network = SpyQuery<[ArticleDTO], APIError>(.failure(.offline))

    let articles =
      cache
      .expiring(validationPolicy: .maxAge(.seconds(300)), now: now.provider)
      .fallback(network.map(with: { dtos in dtos.map(Article.init) }).store(into: cache))

    // Both fail: fallback reports the network's error, with its static type.
    let result: Result<[Article], APIError> = await articles.result()
    #expect(result == .failure(.offline))
    #expect(cache.saveCount == 0)
  }

  @Test("the whole toolkit composes: retry, timeout, single flight behind the cache")
  func fullPipeline() async throws {
    let clock = ManualClock()
    let cache = SpyStorage<Int>(now: clock.dateProvider)
    let network = SpyQuery<Int, any Error>(results: [.failure(TestError("503")), .success(42)])
    let live =
      network
      .retry(.constant(maxAttempts: 3, delay: .seconds(1)), clock: clock)
      .timeout(.seconds(30), clock: clock)
      .mapError { $0 as any Error }
      .store(into: cache)
      .serial()
    let pipeline = cache.expiring(validationPolicy: .maxAge(.seconds(60)), now: clock.dateProvider).fallback(live)

    let first = Task { try await pipeline.load() }
    let second = Task { try await pipeline.load() }
    await clock.waitForSleepers(count: 2)  // the retry delay and the timeout
    clock.advance(by: .seconds(1))

    #expect(try await first.value == 42)
    #expect(try await second.value == 42)
    #expect(network.loadCount == 2)  // one shared load, retried once
    #expect(try await pipeline.load() == 42)  // now from the cache
    #expect(network.loadCount == 2)
  }
}
