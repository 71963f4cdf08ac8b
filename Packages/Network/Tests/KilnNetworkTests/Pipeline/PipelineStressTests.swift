import Foundation
import KilnNetwork
import KilnStorage
import KilnTesting
import Testing

/// Bearer "token-<n>"; a refresh adds one.
private struct Tokens: Authenticator {
  let refreshes: AsyncCounter
  func apply(_ credential: Int, to request: inout HTTPRequest) {
    request.headers["Authorization"] = "Bearer token-\(credential)"
  }
  func refresh(_ credential: Int) async throws -> Int {
    refreshes.increment()
    return credential + 1
  }
}

/// Which paths were tried, behind an `NSLock`: a pthread mutex, which Thread Sanitizer sees
/// (the standard library's futex-based `Mutex` it does not).
private final class FirstTries: @unchecked Sendable {
  private let lock = NSLock()
  private var paths: Set<String> = []

  /// Whether `path` is tried for the first time.
  func isFirst(_ path: String) -> Bool {
    lock.withLock { paths.insert(path).inserted }
  }
}

@Suite("The request pipeline under load", .timeLimit(.minutes(1)))
struct PipelineStressTests {
  @Test("4,000 concurrent requests through every stage: each gets its own answer, one refresh, no hang")
  func thousandsThroughEveryStage() async throws {
    let refreshes = AsyncCounter()
    // The old token is rejected; each item's first try with the new one is a 503 (retried at
    // once); each item answers with its own id and may be cached for a minute.
    let tried = FirstTries()
    let transport = StubTransport { request, _ in
      guard request.headers["Authorization"] == "Bearer token-1" else { return .status(401) }
      if tried.isFirst(request.url.path) { return .status(503) }
      let id = request.url.lastPathComponent
      return .json(#"{"id": \#(id), "name": "n"}"#, headers: ["Cache-Control": "max-age=60"])
    }
    let cache = HTTPCache(store: MemoryCache<String, Data>(countLimit: 10_000, entryLifetime: nil))
    let handler = NetworkHandler(
      transport: transport,
      httpCache: cache,
      retryPolicy: NetworkHandler.RetryPolicy(maxAttempts: 5, backoff: .immediate, jitter: .none, budget: nil),
      watches: [LoggingWatch(log: { _ in })],
      authentication: AuthenticationInterceptor(authenticator: Tokens(refreshes: refreshes), credential: 0),
      timeout: .seconds(30),
      deduplicatesRequests: true)
    let ids = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
      for n in 0..<4_000 {
        group.addTask {
          let id = n % 500  // 8 callers per item: some share a flight, some hit the cache
          return (id, try await handler.request(TestAPI.item(id: id), as: Item.self).id)
        }
      }
      var pairs: [(Int, Int)] = []
      for try await pair in group { pairs.append(pair) }
      return pairs
    }
    #expect(ids.count == 4_000)
    #expect(ids.allSatisfy { $0.0 == $0.1 })
    #expect(refreshes.value == 1)
    let stage = try #require(handler.chain.first(Deduplicating.self))
    #expect(stage.inFlightCount == 0)
  }

  @Test("cancelling thousands of requests in flight through every stage ends each with .cancelled")
  func thousandsCancelled() async {
    let transport = StubTransport(replies: [.never])
    let handler = NetworkHandler(
      transport: transport,
      httpCache: HTTPCache(store: MemoryCache<String, Data>(entryLifetime: nil)),
      retryPolicy: .default,
      watches: [LoggingWatch(log: { _ in })],
      timeout: .seconds(300),
      deduplicatesRequests: true)
    let tasks = (0..<2_000).map { n in send(handler, TestAPI.item(id: n % 100)) }
    await transport.waitForRequests(100)
    for task in tasks { task.cancel() }
    for task in tasks {
      let result = await task.value
      guard case .failure(.cancelled) = result else {
        Issue.record("expected cancelled, got \(result)")
        return
      }
    }
  }
}
