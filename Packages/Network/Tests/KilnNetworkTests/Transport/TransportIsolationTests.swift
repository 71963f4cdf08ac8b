import Foundation
import KilnNetwork
import Testing
import _KilnTestServer

#if AsyncHTTPClient
  import AsyncHTTPClient
#endif

/// A transport keeps no cache and no cookies of its own: what it sends is what it was given.
@Suite("Transports: no cache and no cookies of their own", .timeLimit(.minutes(1)))
struct TransportIsolationTests {
  @Test(
    "a cacheable response is fetched again, and a Set-Cookie is never sent back", arguments: TransportKind.allCases)
  func noCacheNoCookies(kind: TransportKind) async throws {
    let server = try await TestServer.start { request in
      TestResponse(
        status: 200,
        headers: [
          ("Cache-Control", "public, max-age=600"), ("ETag", "\"v1\""),
          ("Last-Modified", "Mon, 23 Nov 2026 00:00:00 GMT"), ("Set-Cookie", "session=abc; Path=/"),
        ],
        body: Array("body \(request.connection)".utf8))
    }
    try await kind.withTransport { transport in
      for _ in 0..<3 {
        let response = try await transport.send(HTTPRequest(url: server.url("/cacheable")))
        #expect(response.status == 200)
        #expect(response.headers["Set-Cookie"]?.hasPrefix("session=abc") == true)
      }
    }
    let received = server.requests
    #expect(received.count == 3)
    #expect(received.allSatisfy { $0.headers["cookie"] == nil })
    #expect(received.allSatisfy { $0.headers["if-none-match"] == nil && $0.headers["if-modified-since"] == nil })
    try await server.stop()
  }

  #if AsyncHTTPClient
    @Test("a transport over a client passed in uses it and leaves its shutdown to the owner")
    func passedInClient() async throws {
      let server = try await TestServer.start { _ in .text("ok") }
      let client = HTTPClient(
        eventLoopGroup: HTTPClient.defaultEventLoopGroup,
        configuration: HTTPClient.Configuration(redirectConfiguration: .disallow))
      let transport = AsyncHTTPClientTransport(client: client)
      let first = try await transport.send(HTTPRequest(url: server.url("/a")))
      try await transport.shutdown()
      // Still usable: the transport did not shut the client down.
      let second = try await transport.send(HTTPRequest(url: server.url("/b")))
      #expect(first.status == 200)
      #expect(second.status == 200)
      try await client.shutdown()
      #expect(server.requests.map(\.path) == ["/a", "/b"])
      try await server.stop()
    }
  #endif
}
