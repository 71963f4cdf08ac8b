import Benchmark
import Foundation
import KilnBenchmarkSupport
import KilnNetwork
import KilnStorage

// The request pipeline with every stage `NetworkHandler` builds from its settings
// (`Deduplicating`, `HTTPCaching`, `Retrying`, `Authenticating`, `Watching`, `AttemptTimeout`),
// composed as a user composes it: a `NetworkHandler` given each setting, an `HTTPCache` over a
// `MemoryCache`, an `AuthenticationInterceptor` over an authenticator of the user's, a watch of
// the user's. Two costs are measured:
//
// - a request the cache cannot answer and nothing retries (the server says `no-store`), against
//   the same transport's `send`: what the stages add to every request that goes to the network;
// - a fresh HTTP-cache hit, against a `MemoryCache<String, Data>` lookup: what the stages add
//   to a request answered from memory.

// MARK: - What a user writes

/// The token every request carries, on both sides of a comparison.
let bearerToken = "benchmark-token"

/// A bearer token that never needs refreshing: the authenticator of the handlers below, as
/// trivial as one gets (the server never answers 401, so `refresh` is never called).
struct BearerAuthenticator: Authenticator {
  func apply(_ credential: String, to request: inout HTTPRequest) {
    request.headers["Authorization"] = "Bearer \(credential)"
  }

  func refresh(_ credential: String) async throws -> String {
    credential
  }
}

/// A watch that does nothing: the `Watching` stage at its own cost.
struct IdleWatch: NetworkWatch {}

/// One list of articles on a server: `articles/<list>`.
///
/// With several requests in flight, each worker asks for a list of its own: identical `GET`s in
/// flight together would share one request through `Deduplicating` (fewer requests on the
/// wire than the baseline sends), while distinct ones measure what the stage costs when it has
/// nothing to share. The server answers every path with the same body.
struct ArticleList: TargetGroup {
  let baseURL: URL
  let list: Int

  var path: String { "articles/\(list)" }
}

/// A handler with every stage: single flight, an RFC 9111 cache in memory, the default retry
/// policy, a bearer token, one watch and a per-attempt timeout.
func handlerWithEveryStage(_ transport: any Transport, cache: HTTPCache) -> NetworkHandler {
  NetworkHandler(
    transport: transport,
    httpCache: cache,
    retryPolicy: .default,
    watches: [IdleWatch()],
    authentication: AuthenticationInterceptor(authenticator: BearerAuthenticator(), credential: bearerToken),
    timeout: .seconds(30),
    deduplicatesRequests: true
  )
}

/// An HTTP cache over a `MemoryCache`, as the documentation makes one.
func memoryHTTPCache() -> HTTPCache {
  HTTPCache(store: MemoryCache<String, Data>(countLimit: 1_000, entryLifetime: nil))
}

func startServer(cacheControl: String) -> LoopbackHTTPServer {
  do {
    return try LoopbackHTTPServer.start(body: articlesJSON, headers: [("Cache-Control", cacheControl)])
  } catch {
    fatalError("The loopback HTTP server did not start: \(error)")
  }
}

// MARK: - A miss through every stage

// Everything below is created on first use, in the process of the benchmark that uses it.

/// The server of the misses: every response `no-store`, so the cache looks each request up,
/// forwards it and stores nothing.
let noStoreServer = startServer(cacheControl: "no-store")

/// The lists the workers ask for, one per worker (64 at most).
let noStoreLists = (0..<64).map { ArticleList(baseURL: noStoreServer.url(), list: $0) }

/// What the baseline sends for each list: the request the handler sends for it, built the same
/// way, the token added by hand.
let noStoreRequests: [HTTPRequest] = noStoreLists.map { list in
  do {
    var request = try list.makeRequest()
    request.headers["Authorization"] = "Bearer \(bearerToken)"
    return request
  } catch {
    fatalError("The target makes no request: \(error)")
  }
}

let urlSessionHandlerWithEveryStage = handlerWithEveryStage(urlSessionTransport, cache: memoryHTTPCache())
let asyncHTTPClientHandlerWithEveryStage = handlerWithEveryStage(asyncHTTPClientTransport, cache: memoryHTTPCache())

extension Client {
  var handlerWithEveryStage: NetworkHandler {
    switch self {
    case .urlSession: urlSessionHandlerWithEveryStage
    case .asyncHTTPClient: asyncHTTPClientHandlerWithEveryStage
    }
  }
}

// MARK: - A fresh hit through every stage

/// The server of the hits: every response fresh for a day.
let maxAgeServer = startServer(cacheControl: "max-age=86400")

let cachedList = ArticleList(baseURL: maxAgeServer.url(), list: 0)

/// The handler of the hits. Its transport is reached once, to fill the cache.
let cachingHandler = handlerWithEveryStage(urlSessionTransport, cache: memoryHTTPCache())

/// The baseline's cache: the body of the same response, keyed by its URL.
let bodyCache = MemoryCache<String, Data>(countLimit: 1_000, entryLifetime: nil)

/// The key of the body in `bodyCache`.
let cachedKey = (try! cachedList.makeURL()).absoluteString

func pipelineBenchmarks() {
  // 1. A request that goes to the network through every stage: the cache misses (the response
  // is `no-store`, so nothing is ever stored), nothing is retried (the server answers 200),
  // the token is added, the watch is told, the attempt runs under its timeout. Baseline: the
  // same requests, token included, through the same transport's `send`, their status checked
  // (as the handler validates it); neither side decodes the body.
  for client in Client.allCases {
    for inFlight in [1, 64] {
      let requests = inFlight == 1 ? 100 : 256
      // Outside the measured time: one exchange on each side, so that both start with a
      // connection open; and proof that the handler's request is a miss that stores nothing.
      let setUp: @Sendable () async throws -> Void = {
        let response = try await client.handlerWithEveryStage.request(noStoreLists[0])
        precondition(
          response.cacheStatus?.hit == false && response.cacheStatus?.stored == false,
          "not a miss that stores nothing: \(response.headers)")
        _ = try await client.transport.send(noStoreRequests[0])
      }

      comparison(
        "NetworkHandler every stage GET 1 KB (no-store miss) vs Transport.send (\(client.rawValue), \(inFlight) in flight)",
        batch: requests,
        maxIterations: 100,
        setUp: setUp
      ) { _ in
        let handler = client.handlerWithEveryStage
        let lists = noStoreLists
        try await runInFlight(requests, inFlight: inFlight) { worker in
          blackHole(try await handler.request(lists[worker]))
        }
      } baseline: { _ in
        let transport = client.transport
        let requestsSent = noStoreRequests
        try await runInFlight(requests, inFlight: inFlight) { worker in
          let response = try await transport.send(requestsSent[worker])
          guard (200..<300).contains(response.status) else { throw UnexpectedStatus(status: response.status) }
          blackHole(response)
        }
      }
    }
  }

  // 2. A fresh hit, answered by the `HTTPCaching` stage (after `Deduplicating`) and decoded
  // into the model by the handler.
  //
  // What "decode" means on each side: both end with the same `[Article]`, JSON-decoded with a
  // `JSONDecoder` from the same 1 KB of body bytes, which is what a user of either wants. The
  // baseline keeps what a hand-written response cache keeps, the body bytes, in a
  // `MemoryCache<String, Data>` keyed by URL, and decodes them. The HTTP cache keeps an
  // encoded response (status, times, URL, header fields, body) in the same kind of store;
  // reading that form back, judging its freshness and building the served response is the
  // work being measured, so the baseline is not handed it: decoding Kiln's stored form by hand
  // is not possible through public API, and would only move Kiln's cost into the baseline.
  let fillCaches: @Sendable () async throws -> Void = {
    // Stored now, or by the other comparison's set-up when both run in one process.
    let stored = try await cachingHandler.request(cachedList)
    precondition(
      stored.cacheStatus?.stored == true || stored.cacheStatus?.hit == true, "not stored: \(stored.headers)")
    let hit = try await cachingHandler.request(cachedList)
    precondition(hit.cacheStatus?.hit == true, "not a hit: \(hit.headers)")
    // The baseline's cache, filled as a user fills it: the body of the same response.
    let response = try await urlSessionTransport.send(try cachedList.makeRequest())
    bodyCache[cachedKey] = response.body
  }
  let decoder = JSONDecoder()

  comparison(
    "NetworkHandler every stage HTTP cache fresh hit + decode vs MemoryCache lookup + decode",
    batch: 1_000,
    setUp: fillCaches
  ) { _ in
    let handler = cachingHandler
    for _ in 0..<1_000 {
      blackHole(try await handler.request(cachedList, as: [Article].self))
    }
  } baseline: { _ in
    for _ in 0..<1_000 {
      let body = bodyCache[cachedKey]!
      blackHole(try decoder.decode([Article].self, from: body))
    }
  }

  // Reported without a target: the same hit without decoding, beside the bare lookup; the
  // stages' and the cache's own cost.
  comparison(
    "NetworkHandler every stage HTTP cache fresh hit vs MemoryCache lookup (no decode)",
    batch: 1_000,
    setUp: fillCaches
  ) { _ in
    let handler = cachingHandler
    for _ in 0..<1_000 {
      blackHole(try await handler.request(cachedList))
    }
  } baseline: { _ in
    for _ in 0..<1_000 {
      blackHole(bodyCache[cachedKey])
    }
  }
}
