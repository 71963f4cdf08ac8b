import Foundation
import KilnNetwork
import KilnStorage
import KilnTesting
import Testing
import _KilnTestServer

/// A target on the loopback server whose storage key can be anything, also hostile.
private struct Endpoint: TargetGroup {
  var baseURL: URL
  var path: String
  var key: String?

  var storageKey: String { key ?? "GET \(baseURL.absoluteString)/\(path)" }
}

/// The persistent stores a response cache can live in.
enum PersistentStore: String, CaseIterable, CustomTestStringConvertible, Sendable {
  case disk
  case sqlite

  var testDescription: String { rawValue }

  /// A response store over the store of this kind inside `directory`; opening it again reads
  /// what was written.
  func open(in directory: URL, now: @escaping @Sendable () -> Date) throws -> any ResponseStore {
    switch self {
    case .disk:
      ResponseItemStore(try DiskCache<String, Data>(directory: directory.appending(path: "responses"), now: now))
    case .sqlite:
      ResponseItemStore(try SQLiteStore<String, Data>(url: directory.appending(path: "responses.sqlite"), now: now))
    }
  }
}

/// KilnNetwork's handler keeping whole responses (Lynn's storage managers) in KilnStorage's
/// persistent stores, against the loopback server: what an app that relaunches offline sees.
@Suite("Response cache over real stores", .timeLimit(.minutes(2)))
struct ResponseCacheOverStoresTests {
  @Test(
    "a cached response is served without a request, survives a relaunch and the server going away, then expires",
    arguments: PersistentStore.allCases)
  func servedAcrossRelaunch(store kind: PersistentStore) async throws {
    try await withTemporaryDirectory { directory in
      let now = ManualDate()
      let server = try await TestServer.start { request in
        .json(["id": 7, "served": request.path.count])
      }
      let target = Endpoint(baseURL: server.baseURL, path: "articles/7")
      let validFor60s: @Sendable (Data) -> Date = { _ in now.now.addingTimeInterval(60) }

      let handler = NetworkHandler(
        transport: URLSessionTransport(), storage: try kind.open(in: directory, now: now.provider),
        retryPolicy: .never, now: now.provider)
      let first = try await handler.request(target, validUntil: validFor60s)
      #expect(first.status == 200)
      #expect(server.requestCount(path: "/articles/7") == 1)
      let second = try await handler.request(target, validUntil: validFor60s)
      #expect(second.body == first.body)
      #expect(server.requestCount(path: "/articles/7") == 1, "a valid cached response sends no request")

      // The app relaunches offline: a new store on the same files, a new handler, no server.
      try await server.stop()
      let relaunched = NetworkHandler(
        transport: URLSessionTransport(), storage: try kind.open(in: directory, now: now.provider),
        retryPolicy: .never, now: now.provider)
      let offline = try await relaunched.request(target, validUntil: validFor60s)
      #expect(offline.body == first.body)

      // Once it is no longer valid, the handler goes to the network — which is gone — and
      // reports the transport's error rather than serving an expired response.
      now.advance(by: .seconds(61))
      await #expect {
        _ = try await relaunched.request(target, validUntil: validFor60s)
      } throws: { error in
        guard case NetworkError.transport = error else { return false }
        return true
      }
    }
  }

  @Test(
    "hostile storage keys stay data: nothing is written outside the store, each key keeps its own response",
    arguments: PersistentStore.allCases)
  func hostileKeys(store kind: PersistentStore) async throws {
    try await withTemporaryDirectory { directory in
      // The store lives one level down, so the test can see anything written beside it.
      let storeDirectory = directory.appending(path: "store")
      try FileManager.default.createDirectory(at: storeDirectory, withIntermediateDirectories: true)
      let server = try await TestServer.start { request in .text("body of \(request.path)") }
      let keys = [
        "../../etc/passwd", "../escape", "/absolute", "'; DROP TABLE kiln_cache; --", "nul\u{0}byte",
        String(repeating: "k", count: 10_000), "🔥 emoji/with/slashes", "",
      ]
      let handler = NetworkHandler(
        transport: URLSessionTransport(), storage: try kind.open(in: storeDirectory, now: Date.init),
        retryPolicy: .never)
      let validForAnHour: @Sendable (Data) -> Date = { _ in Date().addingTimeInterval(3_600) }
      for (index, key) in keys.enumerated() {
        let target = Endpoint(baseURL: server.baseURL, path: "item/\(index)", key: key)
        _ = try await handler.request(target, validUntil: validForAnHour)
      }
      #expect(server.requests.count == keys.count)

      // Each key answers its own response from the cache, without a request.
      for (index, key) in keys.enumerated() {
        let target = Endpoint(baseURL: server.baseURL, path: "item/\(index)", key: key)
        let cached = try await handler.request(target, validUntil: validForAnHour)
        #expect(String(decoding: cached.body, as: UTF8.self) == "body of /item/\(index)", "key \(index)")
      }
      #expect(server.requests.count == keys.count)
      try await server.stop()

      let beside = try FileManager.default.contentsOfDirectory(atPath: directory.path)
      #expect(beside == ["store"], "a storage key wrote outside the store's directory")
    }
  }
}
