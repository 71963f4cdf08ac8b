import Foundation
import KilnCore
import Synchronization
import _KilnTestServer

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// An article as the demo's JSON API sends it.
struct Article: Codable, Hashable, Sendable {
  var id: Int
  var title: String
}

/// The feed: a version number that goes up with every request the server answers.
struct Feed: Codable, Hashable, Sendable {
  var version: Int
  var headline: String
}

/// The demo's JSON API, served on loopback by a real HTTP server:
///
/// - `GET /feed` — the feed, a new version per request;
/// - `GET /articles?page=N` — four articles per page for pages 1 to 3, then an empty page;
/// - `GET /flaky` — `503 Service Unavailable` twice, then the feed;
/// - `GET /search?q=…` — the articles whose title contains the query;
/// - `GET /inventory` — `503` with `Retry-After: 1` once, then the inventory;
/// - `GET /echo?q=…` — the query value as the server read it.
///
/// Every answer takes about 20 ms, like a nearby server.
enum DemoAPI {
  static let latency: Duration = .milliseconds(20)

  static func start() async throws -> TestServer {
    let counters = Counters()
    return try await TestServer.start { request in
      try? await Task.sleep(for: latency)
      switch request.path {
      case "/feed":
        let version = counters.next("feed")
        return .json(Feed(version: version, headline: "Kiln \(version).0 is out"))
      case "/articles":
        let page = Int(request.query["page"] ?? "") ?? 0
        guard (1...3).contains(page) else { return .json([Article]()) }
        return .json((1...4).map { Article(id: (page - 1) * 4 + $0, title: "Article \((page - 1) * 4 + $0)") })
      case "/flaky":
        let attempt = counters.next("flaky")
        return attempt <= 2 ? .status(503) : .json(Feed(version: attempt, headline: "made it on attempt \(attempt)"))
      case "/search":
        let query = request.query["q", default: ""].lowercased()
        return .json(["Kiln", "Kilns and kilnsmiths", "Pottery"].filter { $0.lowercased().contains(query) })
      case "/inventory":
        let attempt = counters.next("inventory")
        return attempt == 1
          ? .status(503, headers: [("Retry-After", "1")])
          : .json(Inventory(items: ["celadon bowl", "raku cup", "stoneware jug"], attempt: attempt))
      case "/echo":
        return .json(["q": request.query["q"] ?? ""])
      default:
        return .status(404)
      }
    }
  }
}

/// Counts per name, safe from any thread.
final class Counters: Sendable {
  private let counts = Mutex<[String: Int]>([:])

  func next(_ name: String) -> Int {
    counts.withLock { counts in
      counts[name, default: 0] += 1
      return counts[name]!
    }
  }
}

/// A `GET` of JSON over `URLSession`, as a Kiln `Query`. (KilnNetwork will replace this
/// hand-written query with typed targets and a network handler.)
struct GetJSON<Value: Decodable & Sendable>: Query {
  let url: URL

  func load() async throws(any Error) -> Value {
    let (data, response) = try await URLSession.shared.data(from: url)
    let status = (response as? HTTPURLResponse)?.statusCode ?? 0
    guard status == 200 else { throw HTTPStatusError(status: status, url: url) }
    return try JSONDecoder().decode(Value.self, from: data)
  }
}

/// A response whose status was not 200.
struct HTTPStatusError: Error, CustomStringConvertible {
  var status: Int
  var url: URL
  var description: String { "HTTP \(status) from \(url.path)" }
}
