import Foundation
import KilnNetwork
import KilnStorage
import _KilnTestServer

/// The shop endpoints of the demo's API, described as a KilnNetwork target.
struct ShopTarget: TargetGroup {
  enum Endpoint: Sendable {
    case inventory
    case echo(query: String)
  }

  let baseURL: URL
  let endpoint: Endpoint

  var path: String {
    switch endpoint {
    case .inventory: "inventory"
    case .echo: "echo"
    }
  }

  var task: NetworkTask {
    switch endpoint {
    case .inventory: .plain
    case .echo(let query): .parameters(["q": query])
    }
  }
}

/// The shop's inventory as the API sends it.
struct Inventory: Codable, Hashable, Sendable {
  var items: [String]
  var attempt: Int
}

/// Step: typed targets sent through a `NetworkHandler` — retried after a `503` as its
/// `Retry-After` says, logged with credentials redacted, cached by storage key, and a query
/// value with every troublesome character round-tripped through the server.
enum NetworkStep {
  static func run(server: TestServer, transport: any Transport) async throws {
    let inventoryTarget = ShopTarget(baseURL: server.baseURL, endpoint: .inventory)
    let handler = NetworkHandler(
      transport: transport,
      storage: ResponseItemStore(MemoryCache<String, Data>(countLimit: 100)),
      retryPolicy: .default,
      watches: [LoggingWatch(logsHeaders: false) { print("   " + $0) }]
    )

    let validForAMinute: @Sendable (Inventory) -> Date = { _ in Date().addingTimeInterval(60) }
    let clock = ContinuousClock()
    var start = clock.now
    let inventory = try await handler.request(inventoryTarget, as: Inventory.self, validUntil: validForAMinute)
    let time = start.duration(to: clock.now)
    print("   → \(inventory.items.joined(separator: ", ")) on attempt \(inventory.attempt), \(show(time)) in all")
    check(server.requestCount(path: "/inventory") == 2, "a 503, then the inventory")
    check(time >= .seconds(1), "the retry waited for Retry-After: 1")

    start = clock.now
    let cached = try await handler.request(inventoryTarget, as: Inventory.self, validUntil: validForAMinute)
    let cachedTime = start.duration(to: clock.now)
    print("   again: from the response cache in \(show(cachedTime)), no request")
    check(cached == inventory && server.requestCount(path: "/inventory") == 2, "the cached inventory")

    let tricky = "tea & coffee = 100% + more/less? #1 🔥"
    let echoed = try await handler.request(
      ShopTarget(baseURL: server.baseURL, endpoint: .echo(query: tricky)), as: [String: String].self)
    print("   sent q=\"\(tricky)\", the server read \"\(echoed["q"] ?? "")\"")
    check(echoed["q"] == tricky, "the query value round-trips exactly")

    var request = try ShopTarget(baseURL: server.baseURL, endpoint: .echo(query: "kiln")).makeRequest()
    request.headers["Authorization"] = "Bearer secret-token"
    print("   as curl: \(request.curlCommand())")
  }
}
