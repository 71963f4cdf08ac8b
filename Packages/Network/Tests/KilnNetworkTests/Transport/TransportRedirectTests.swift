import Foundation
import KilnNetwork
import KilnTesting
import Testing
import _KilnTestServer

/// Redirects as ``TransportOptions/redirects`` allows, credentials kept to their origin, for
/// every real transport.
@Suite("Transports: redirects", .timeLimit(.minutes(2)))
struct TransportRedirectTests {
  /// `/hop/<n>` redirects to `/hop/<n-1>`; `/hop/0` answers 200 with the path it was reached by.
  private static func chainServer() async throws -> TestServer {
    try await TestServer.start { request in
      guard request.path.hasPrefix("/hop/"), let left = Int(request.path.dropFirst(5)) else { return .status(404) }
      return left == 0 ? .text("landed") : .redirect(to: "/hop/\(left - 1)", status: left % 2 == 0 ? 301 : 307)
    }
  }

  @Test("up to the limit of redirects are followed; one more is tooManyRedirects", arguments: TransportKind.allCases)
  func limit(kind: TransportKind) async throws {
    let server = try await Self.chainServer()
    try await kind.withTransport { transport in
      let followed = try await transport.send(
        HTTPRequest(url: server.url("/hop/3")), options: TransportOptions(redirects: .follow(limit: 3)))
      #expect(followed.status == 200)
      #expect(String(decoding: followed.body, as: UTF8.self) == "landed")
      #expect(followed.url?.path == "/hop/0")
      #expect(
        await transportError(
          transport, HTTPRequest(url: server.url("/hop/4")), options: TransportOptions(redirects: .follow(limit: 3)))
          == .tooManyRedirects)
      #expect(
        await transportError(
          transport, HTTPRequest(url: server.url("/hop/1")), options: TransportOptions(redirects: .follow(limit: 0)))
          == .tooManyRedirects)
      let byDefault = try await transport.send(HTTPRequest(url: server.url("/hop/10")))
      #expect(byDefault.status == 200)
    }
    #expect(server.requestCount(path: "/hop/0") == 2)
    try await server.stop()
  }

  @Test("with redirects .none the 3xx itself is the response", arguments: TransportKind.allCases)
  func none(kind: TransportKind) async throws {
    let server = try await TestServer.start { request in
      switch request.path {
      case "/moved": .redirect(to: "/new", status: 301)
      case "/nowhere": TestResponse(status: 302, body: Array("no location".utf8))
      default: .text("new")
      }
    }
    try await kind.withTransport { transport in
      let response = try await transport.send(
        HTTPRequest(url: server.url("/moved")), options: TransportOptions(redirects: .none))
      #expect(response.status == 301)
      #expect(response.headers["Location"] == "/new")
      // A 3xx without Location is a response too, whatever the options.
      let nowhere = try await transport.send(HTTPRequest(url: server.url("/nowhere")))
      #expect(nowhere.status == 302)
      #if canImport(FoundationNetworking)
        // FoundationNetworking drops the body of every 3xx response.
        let expectedBody = kind == .urlSession ? "" : "no location"
      #else
        let expectedBody = "no location"
      #endif
      #expect(String(decoding: nowhere.body, as: UTF8.self) == expectedBody)
    }
    #expect(server.requestCount(path: "/new") == 0)
    try await server.stop()
  }

  @Test(
    "Authorization, Cookie and Proxy-Authorization are not sent to another host, kept on the same one",
    arguments: TransportKind.allCases)
  func credentials(kind: TransportKind) async throws {
    let server = try await TestServer.start { request in
      switch request.path {
      case "/to-localhost":
        let port = request.headers["host"]?.split(separator: ":").last.map(String.init) ?? ""
        return .redirect(to: "http://localhost:\(port)/landed", status: 307)
      case "/same-host": return .redirect(to: "/landed", status: 302)
      default: return .text("ok")
      }
    }
    let credentials: HTTPHeaders = [
      "Authorization": "Bearer secret", "Cookie": "session=1", "Proxy-Authorization": "Basic eA==", "X-Trace": "t1",
    ]
    try await kind.withTransport { transport in
      let crossHost = try await transport.send(HTTPRequest(url: server.url("/to-localhost"), headers: credentials))
      #expect(crossHost.status == 200)
      #expect(crossHost.url?.host == "localhost")
      let sameHost = try await transport.send(HTTPRequest(url: server.url("/same-host"), headers: credentials))
      #expect(sameHost.status == 200)
    }
    let landed = server.requests.filter { $0.path == "/landed" }
    try #require(landed.count == 2)
    #expect(landed[0].headers["host"]?.hasPrefix("localhost:") == true)
    #expect(landed[0].headers["authorization"] == nil)
    #expect(landed[0].headers["cookie"] == nil)
    #expect(landed[0].headers["proxy-authorization"] == nil)
    #expect(landed[0].headers["x-trace"] == "t1")
    #expect(landed[1].headers["host"]?.hasPrefix("127.0.0.1:") == true)
    #expect(landed[1].headers["authorization"] == "Bearer secret")
    #expect(landed[1].headers["cookie"] == "session=1")
    #expect(landed[1].headers["proxy-authorization"] == "Basic eA==")
    try await server.stop()
  }

  @Test("303 turns a POST into a body-less GET; 307 and 308 keep method and body", arguments: TransportKind.allCases)
  func methodRewrite(kind: TransportKind) async throws {
    let server = try await TestServer.start { request in
      switch request.path {
      case "/see-other": .redirect(to: "/target", status: 303)
      case "/temporary": .redirect(to: "/target", status: 307)
      case "/permanent": .redirect(to: "/target", status: 308)
      default: .text("\(request.method) \(String(decoding: request.body, as: UTF8.self))")
      }
    }
    try await kind.withTransport { transport in
      for (path, expected) in [("/see-other", "GET "), ("/temporary", "POST form"), ("/permanent", "POST form")] {
        let response = try await transport.send(
          HTTPRequest(
            method: .post, url: server.url(path), headers: ["Content-Type": "text/plain"],
            body: .data(Data("form".utf8))))
        #expect(String(decoding: response.body, as: UTF8.self) == expected, "\(path)")
      }
    }
    try await server.stop()
  }
}
