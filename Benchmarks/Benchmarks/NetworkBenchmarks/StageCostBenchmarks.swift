import Benchmark
import Foundation
import KilnBenchmarkSupport
import KilnNetwork
import KilnStorage

// What each stage of the request pipeline costs on its own: a `RequestChain` with that one
// stage (then with all of them, in `NetworkHandler`'s order) in front of a transport that
// answers from memory, against the same transport's `send`. Reported without a target: with
// no network under it, the ratio is large by construction; the figure that matters is the
// difference, in time and allocations, that each stage adds to every request. The cases with
// a target over real HTTP are in PipelineBenchmarks.swift.

/// A transport of the user's that answers from memory, after one suspension (as a real one
/// would): a `no-store` 1 KB response, so that `HTTPCaching` forwards and stores nothing.
struct InstantTransport: Transport {
  let response: HTTPResponse
  func send(_ request: HTTPRequest, options: TransportOptions) async throws(TransportError) -> HTTPResponse {
    await Task.yield()
    return response
  }
}

let inMemoryTransport = InstantTransport(
  response: HTTPResponse(status: 200, headers: ["Cache-Control": "no-store"], body: articlesJSON))
/// Never sent anywhere: the transport answers from memory.
let inMemoryRequest = HTTPRequest(url: URL(string: "http://127.0.0.1:1/articles/1")!)

func stageCostBenchmarks() {
  let authentication = AuthenticationInterceptor(authenticator: BearerAuthenticator(), credential: bearerToken)
  let stages: [(String, [any RequestMiddleware])] = [
    ("no stage", []),
    ("Deduplicating", [Deduplicating()]),
    ("HTTPCaching", [HTTPCaching(memoryHTTPCache())]),
    ("Retrying", [Retrying(.default)]),
    ("Authenticating", [Authenticating(authentication)]),
    ("Watching", [Watching([IdleWatch()])]),
    ("AttemptTimeout", [AttemptTimeout(.seconds(30))]),
    (
      "every stage",
      [
        Deduplicating(), HTTPCaching(memoryHTTPCache()), Retrying(.default), Authenticating(authentication),
        Watching([IdleWatch()]), AttemptTimeout(.seconds(30)),
      ]
    ),
  ]
  // The same stages built by a `NetworkHandler` from its settings, with what the handler adds:
  // building the request from a target, validating the status.
  let handler = handlerWithEveryStage(inMemoryTransport, cache: memoryHTTPCache())
  let target = ArticleList(baseURL: URL(string: "http://127.0.0.1:1")!, list: 1)
  comparison("NetworkHandler stage cost: every stage vs in-memory Transport.send", batch: 1_000) { _ in
    for _ in 0..<1_000 { blackHole(try await handler.request(target)) }
  } baseline: { _ in
    for _ in 0..<1_000 { blackHole(try await inMemoryTransport.send(inMemoryRequest)) }
  }
  for (name, middleware) in stages {
    let chain = RequestChain(transport: inMemoryTransport, middleware: middleware)
    comparison("RequestChain stage cost: \(name) vs in-memory Transport.send", batch: 1_000) { _ in
      for _ in 0..<1_000 { blackHole(try await chain.send(inMemoryRequest)) }
    } baseline: { _ in
      for _ in 0..<1_000 { blackHole(try await inMemoryTransport.send(inMemoryRequest)) }
    }
  }
}
