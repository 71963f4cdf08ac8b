import Benchmark
import Foundation
import KilnBenchmarkSupport
import KilnNetwork
import Synchronization

/// One article of the 1 KB JSON list both sides decode.
struct Article: Codable, Sendable {
  var id: Int
  var title: String
  var tags: [String]
}

/// About 1 KB of JSON: sixteen articles.
let articlesJSON: Data = {
  let articles = (0..<16).map { Article(id: $0, title: "Article number \($0)", tags: ["swift", "network"]) }
  let data = try! JSONEncoder().encode(articles)
  precondition((900...1_100).contains(data.count), "the body is \(data.count) bytes, not about 1 KB")
  return data
}()

/// The server both sides talk to, started on first use: each benchmark runs in a process of
/// its own, so once per benchmark process.
let server: LoopbackHTTPServer = {
  do {
    return try LoopbackHTTPServer.start(body: articlesJSON)
  } catch {
    fatalError("The loopback HTTP server did not start: \(error)")
  }
}()

/// The endpoint, as a user describes it.
struct ArticlesAPI: TargetGroup {
  let baseURL: URL
  var path: String { "articles" }
}

/// The endpoint on the server.
let articles = ArticlesAPI(baseURL: server.url())
/// The same request the handler sends for it: what the baseline sends.
let articlesRequest: HTTPRequest = {
  do {
    return try articles.makeRequest()
  } catch {
    fatalError("The target makes no request: \(error)")
  }
}()

/// The transports, created on first use and shared by every iteration and both sides.
let urlSessionTransport = URLSessionTransport()
let asyncHTTPClientStarted = Atomic<Bool>(false)
let asyncHTTPClientTransport: AsyncHTTPClientTransport = {
  asyncHTTPClientStarted.store(true, ordering: .sequentiallyConsistent)
  return AsyncHTTPClientTransport()
}()

/// The handlers over them, as a user makes one: every option at its default.
let urlSessionHandler = NetworkHandler(transport: urlSessionTransport)
let asyncHTTPClientHandler = NetworkHandler(transport: asyncHTTPClientTransport)

enum Client: String, CaseIterable {
  case urlSession = "URLSession"
  case asyncHTTPClient = "AsyncHTTPClient"

  var transport: any Transport {
    switch self {
    case .urlSession: urlSessionTransport
    case .asyncHTTPClient: asyncHTTPClientTransport
    }
  }

  var handler: NetworkHandler {
    switch self {
    case .urlSession: urlSessionHandler
    case .asyncHTTPClient: asyncHTTPClientHandler
    }
  }
}

struct UnexpectedStatus: Error {
  let status: Int
}

let benchmarks: @Sendable () -> Void = {
  // Each benchmark runs in a process of its own: shut down the AsyncHTTPClient transport
  // once the benchmark is done, if it was used.
  Benchmark.teardown = {
    if asyncHTTPClientStarted.load(ordering: .sequentiallyConsistent) {
      try await asyncHTTPClientTransport.shutdown()
    }
  }

  for client in Client.allCases {
    for inFlight in [1, 64] {
      let requests = inFlight == 1 ? 100 : 256
      let decoder = JSONDecoder()
      // Outside the measured time: one exchange on each side, so that both start with a
      // connection open (and the server, transport and handler exist).
      let setUp: @Sendable () async throws -> Void = {
        _ = try await client.handler.request(articles, as: [Article].self)
        _ = try await client.transport.send(articlesRequest)
      }

      comparison(
        "NetworkHandler GET 1 KB JSON + decode vs Transport + JSONDecoder (\(client.rawValue), \(inFlight) in flight)",
        batch: requests,
        maxIterations: 100,
        setUp: setUp
      ) { _ in
        let handler = client.handler
        try await runInFlight(requests, inFlight: inFlight) { _ in
          blackHole(try await handler.request(articles, as: [Article].self))
        }
      } baseline: { _ in
        let transport = client.transport
        try await runInFlight(requests, inFlight: inFlight) { _ in
          let response = try await transport.send(articlesRequest)
          guard response.status == 200 else { throw UnexpectedStatus(status: response.status) }
          blackHole(try decoder.decode([Article].self, from: response.body))
        }
      }
    }
  }

  // The request pipeline with every stage (PipelineBenchmarks.swift).
  pipelineBenchmarks()
  // What each stage costs on its own (StageCostBenchmarks.swift).
  stageCostBenchmarks()
  // An offline outbox replaying its queue (OutboxReplayBenchmarks.swift).
  outboxReplayBenchmarks()
  // What Kiln's logging, metrics and tracing integrations cost (ObservationBenchmarks.swift).
  observationBenchmarks()
}
