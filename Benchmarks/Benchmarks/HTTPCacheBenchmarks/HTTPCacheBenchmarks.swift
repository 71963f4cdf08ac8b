import Benchmark
import Foundation
import KilnBenchmarkSupport
import KilnNetwork
import KilnStorage

/// One article of the 1 KB JSON list both sides decode.
struct Article: Codable, Sendable {
  var id: Int
  var title: String
  var tags: [String]
}

/// The origin behind the cache: only reached on a miss, which the measured loops never have.
struct FixedOrigin: Transport {
  let response: HTTPResponse

  func send(_ request: HTTPRequest, options: TransportOptions) async throws(TransportError) -> HTTPResponse {
    response
  }
}

/// About 1 KB of JSON: twelve articles.
let articlesJSON: Data = {
  let articles = (0..<12).map { Article(id: $0, title: "Article number \($0)", tags: ["swift", "cache"]) }
  return try! JSONEncoder().encode(articles)
}()

let benchmarks: @Sendable () -> Void = {
  let url = URL(string: "https://api.example.com/articles")!
  let request = HTTPRequest(url: url, headers: ["Accept": "application/json"])
  let origin = FixedOrigin(
    response: HTTPResponse(
      status: 200,
      headers: [
        "Cache-Control": "max-age=86400", "Content-Type": "application/json", "ETag": "\"v1\"",
        "Date": HTTPDate.format(Date()),
      ],
      body: articlesJSON))

  // Kiln: an HTTP cache over a MemoryCache, filled by one request through the caching transport.
  let httpStore = MemoryCache<String, Data>(countLimit: 1_000, entryLifetime: nil)
  let cache = HTTPCache(store: httpStore)
  let transport = origin.caching(in: cache)
  // Baseline: the same body in a bare MemoryCache, keyed the same way.
  let bareStore = MemoryCache<String, Data>(countLimit: 1_000, entryLifetime: nil)
  bareStore[url.absoluteString] = articlesJSON
  let decoder = JSONDecoder()
  let warm: @Sendable () async throws -> Void = {
    let response = try await transport.send(request)
    precondition(response.cacheStatus?.stored == true || response.cacheStatus?.hit == true)
  }

  comparison("HTTP cache fresh hit + decode vs MemoryCache lookup + decode", batch: 1_000, setUp: warm) { _ in
    for _ in 0..<1_000 {
      let response = try await transport.send(request)
      blackHole(try decoder.decode([Article].self, from: response.body))
    }
  } baseline: { _ in
    for _ in 0..<1_000 {
      let body = bareStore[url.absoluteString]!
      blackHole(try decoder.decode([Article].self, from: body))
    }
  }

  // Reported without a target: the cache's own cost next to the bare lookup, nothing decoded.
  comparison("HTTP cache fresh hit vs MemoryCache lookup (no decode)", batch: 1_000, setUp: warm) { _ in
    for _ in 0..<1_000 {
      blackHole(try await transport.send(request))
    }
  } baseline: { _ in
    for _ in 0..<1_000 {
      blackHole(bareStore[url.absoluteString])
    }
  }

  // The policy alone on a fresh stored response, against a budget of 1 µs: the baseline spins
  // until 1 µs has passed on the continuous clock, so a ratio below 1 means under 1 µs.
  let policy = HTTPCachePolicy()
  let stored = policy.storedResponse(
    origin.response, for: request, requestTime: Date(), responseTime: Date())!
  let now = Date()
  let clock = ContinuousClock()
  comparison("HTTP cache policy fresh-hit decision vs a 1 µs budget") { benchmark in
    for _ in benchmark.scaledIterations {
      blackHole(policy.decision(for: request, stored: stored, now: now))
    }
  } baseline: { benchmark in
    for _ in benchmark.scaledIterations {
      let deadline = clock.now.advanced(by: .microseconds(1))
      while clock.now < deadline {}
    }
  }
}
