import Foundation
import Testing
import _KilnTestServer

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The loopback server every network test and the demo stand on.
@Suite("Loopback test server", .timeLimit(.minutes(1)))
struct TestServerTests {
  @Test("answers over real HTTP and records what it was asked")
  func roundTrip() async throws {
    let server = try await TestServer.start { request in
      request.path == "/articles"
        ? .json([ArticleDTO(id: Int(request.query["page"] ?? "0") ?? 0, title: "t")]) : .status(404)
    }

    let (data, response) = try await URLSession.shared.data(from: server.url("/articles?page=2"))
    #expect((response as? HTTPURLResponse)?.statusCode == 200)
    #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type") == "application/json")
    #expect(try JSONDecoder().decode([ArticleDTO].self, from: data) == [ArticleDTO(id: 2, title: "t")])

    let (_, missing) = try await URLSession.shared.data(from: server.url("/nothing"))
    #expect((missing as? HTTPURLResponse)?.statusCode == 404)
    #expect(server.requests.map(\.description) == ["GET /articles?page=2", "GET /nothing"])
    #expect(server.requestCount(path: "/articles") == 1)
    try await server.stop()
  }

  @Test("keeps no record of requests when told not to, so a soak's server stays flat")
  func withoutRecording() async throws {
    let server = try await TestServer.start(recordsRequests: false) { _ in .text("ok") }
    for _ in 0..<3 {
      let (data, _) = try await URLSession.shared.data(from: server.url("/soak"))
      #expect(String(decoding: data, as: UTF8.self) == "ok")
    }
    #expect(server.requests.isEmpty)
    #expect(server.requestCount(path: "/soak") == 0)
    #expect(server.connectionCount >= 1)
    try await server.stop()
  }

  @Test("receives request bodies and headers")
  func bodyAndHeaders() async throws {
    let server = try await TestServer.start { request in .text(String(decoding: request.body, as: UTF8.self)) }
    var request = URLRequest(url: server.url("/echo"))
    request.httpMethod = "POST"
    request.httpBody = Data("hello".utf8)
    request.setValue("Bearer secret", forHTTPHeaderField: "Authorization")
    let (data, _) = try await URLSession.shared.data(for: request)
    #expect(String(decoding: data, as: UTF8.self) == "hello")
    #expect(server.requests.first?.method == "POST")
    #expect(server.requests.first?.headers["authorization"] == "Bearer secret")
    try await server.stop()
  }

  @Test("a dropped connection and a stopped server are errors for the client")
  func droppedAndStopped() async throws {
    let server = try await TestServer.start { _ in .closeConnection }
    await #expect(throws: (any Error).self) { _ = try await URLSession.shared.data(from: server.url("/drop")) }
    let url = server.url("/after-stop")
    try await server.stop()
    await #expect(throws: (any Error).self) { _ = try await URLSession.shared.data(from: url) }
  }
}
