import Foundation
import KilnRepositoryNetwork
import KilnTesting
import Testing
import _KilnTestServer

/// A user on the loopback server.
private struct User: Codable, Equatable, Sendable {
  var id: Int
  var name: String
}

/// `GET /users/<id>` on the loopback server.
private struct UserTarget: TargetGroup {
  var baseURL: URL
  var id: Int
  var path: String { "users/\(id)" }
}

/// SimpleNetworkLoader against a real HTTP server on loopback.
@MainActor
@Suite("SimpleNetworkLoader", .timeLimit(.minutes(1)))
struct SimpleNetworkLoaderTests {
  @Test("loads and decodes the object of a key through the handler")
  func loadsThroughTheHandler() async throws {
    let server = try await TestServer.start { request in
      request.path == "/users/7" ? .json(User(id: 7, name: "Ada")) : .status(404)
    }
    let loader = SimpleNetworkLoader<Int, User>(handler: NetworkHandler(transport: URLSessionTransport())) { id in
      UserTarget(baseURL: server.baseURL, id: id)
    }
    await loader.load(key: 7)
    #expect(loader.object == User(id: 7, name: "Ada"))
    #expect(loader.error == nil)
    #expect(loader.key == 7)
    try await server.stop()
  }

  @Test("a status error is the loader's error, typed; the last object stays")
  func statusError() async throws {
    let server = try await TestServer.start { request in
      request.path == "/users/1" ? .json(User(id: 1, name: "Grace")) : .status(404)
    }
    let loader = SimpleNetworkLoader<Int, User>(
      handler: NetworkHandler(transport: URLSessionTransport(), retryPolicy: .never)
    ) { id in UserTarget(baseURL: server.baseURL, id: id) }
    await loader.load(key: 1)
    await loader.load(key: 2)
    guard case .status(let response)? = loader.error as? NetworkError else {
      Issue.record("expected NetworkError.status, got \(String(describing: loader.error))")
      return
    }
    #expect(response.status == 404)
    #expect(loader.object == User(id: 1, name: "Grace"))
    try await server.stop()
  }

  @Test("malformed JSON is a decoding error, not a crash")
  func malformedJSON() async throws {
    let server = try await TestServer.start { _ in .text(#"{"id": 3,"#) }
    let loader = SimpleNetworkLoader<Int, User>(handler: NetworkHandler(transport: URLSessionTransport())) { id in
      UserTarget(baseURL: server.baseURL, id: id)
    }
    await loader.load(key: 3)
    guard case .decoding? = loader.error as? NetworkError else {
      Issue.record("expected NetworkError.decoding, got \(String(describing: loader.error))")
      return
    }
    #expect(loader.object == nil)
    try await server.stop()
  }

  @Test("concurrent loads of one key send one request")
  func concurrentLoadsShareOneRequest() async throws {
    let gate = Gate()
    let server = try await TestServer.start { _ in
      try? await gate.wait()
      return .json(User(id: 5, name: "Linus"))
    }
    let loader = SimpleNetworkLoader<Int, User>(handler: NetworkHandler(transport: URLSessionTransport())) { id in
      UserTarget(baseURL: server.baseURL, id: id)
    }
    async let first: Void = loader.load(key: 5)
    async let second: Void = loader.load(key: 5)
    await gate.waitForWaiters(1)  // the first request reached the server and waits there
    gate.open()
    _ = await (first, second)
    #expect(server.requests.count == 1)
    #expect(loader.requestCount == 1)
    #expect(loader.object == User(id: 5, name: "Linus"))
    try await server.stop()
  }
}
