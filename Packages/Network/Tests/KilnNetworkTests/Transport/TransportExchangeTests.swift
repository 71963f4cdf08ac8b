import Foundation
import KilnNetwork
import KilnTesting
import Testing
import _KilnTestServer

/// What goes over the wire and comes back, for every real transport against the loopback server.
@Suite("Transports: requests and responses over loopback", .timeLimit(.minutes(2)))
struct TransportExchangeTests {
  @Test(
    "every method reaches the server by name, custom ones included, with its body",
    arguments: TransportKind.allCases)
  func methods(kind: TransportKind) async throws {
    let server = try await TestServer.start { request in
      var response = TestResponse.text("\(request.method) \(String(decoding: request.body, as: UTF8.self))")
      response.headers.append(("X-Method", request.method))
      return response
    }
    try await kind.withTransport { transport in
      for method: HTTPMethod in [.get, .post, .put, .patch, .delete, .options, "PURGE", "REPORT"] {
        let body: HTTPRequest.Body? = method == .get || method == .options ? nil : .data(Data("payload".utf8))
        let response = try await transport.send(HTTPRequest(method: method, url: server.url("/m"), body: body))
        #expect(response.status == 200)
        let expected = body == nil ? "\(method.rawValue) " : "\(method.rawValue) payload"
        #expect(String(decoding: response.body, as: UTF8.self) == expected)
      }
      let head = try await transport.send(HTTPRequest(method: .head, url: server.url("/m")))
      #expect(head.status == 200)
      #expect(head.headers["X-Method"] == "HEAD")
      #expect(head.body.isEmpty)
    }
    #expect(
      server.requests.map(\.method) == ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "PURGE", "REPORT", "HEAD"])
    try await server.stop()
  }

  @Test("headers go both ways, repeated request fields included", arguments: TransportKind.allCases)
  func headers(kind: TransportKind) async throws {
    let server = try await TestServer.start { request in
      TestResponse(status: 200, headers: [("X-Reply", "yes"), ("X-Echo", request.headers["x-custom"] ?? "-")])
    }
    try await kind.withTransport { transport in
      var headers: HTTPHeaders = ["X-Custom": "value 1", "Accept": "application/json"]
      headers.add("a", for: "X-Repeated")
      headers.add("b", for: "X-Repeated")
      let response = try await transport.send(HTTPRequest(url: server.url("/h"), headers: headers))
      #expect(response.headers["x-reply"] == "yes")
      #expect(response.headers["X-Echo"] == "value 1")
      #expect(response.headers["Content-Length"] == "0")
    }
    let received = try #require(server.requests.first)
    #expect(received.headers["x-custom"] == "value 1")
    #expect(received.headers["accept"] == "application/json")
    let repeated = received.headerFields.filter { $0.name.lowercased() == "x-repeated" }.map(\.value)
    #expect(repeated.joined(separator: ",").replacingOccurrences(of: " ", with: "") == "a,b")
    #expect(received.headers["cookie"] == nil)
    try await server.stop()
  }

  @Test("a request body arrives whole, from memory and from a file", arguments: TransportKind.allCases)
  func requestBodies(kind: TransportKind) async throws {
    let server = try await TestServer.start { request in
      TestResponse(status: 200, body: Array(request.body))
    }
    let payload = Data(TestResponse.pattern(count: 300_000))
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("kiln-transport-\(UUID()).bin")
    try payload.write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    try await kind.withTransport { transport in
      let fromMemory = try await transport.send(
        HTTPRequest(
          method: .post, url: server.url("/echo"), headers: ["Content-Type": "application/octet-stream"],
          body: .data(payload)))
      #expect(fromMemory.body == payload)
      let fromFile = try await transport.send(
        HTTPRequest(method: .put, url: server.url("/echo"), body: .file(file)))
      #expect(fromFile.body == payload)
    }
    #expect(server.requests.map(\.body.count) == [300_000, 300_000])
    try await server.stop()
  }

  @Test("a non-2xx status is a response with its headers and body", arguments: TransportKind.allCases)
  func statuses(kind: TransportKind) async throws {
    let server = try await TestServer.start { request in
      let status = Int(request.path.dropFirst()) ?? 500
      return status == 204 || status == 304
        ? TestResponse(status: status, headers: [("X-Status", "\(status)")])
        : TestResponse(status: status, headers: [("X-Status", "\(status)")], body: Array("status \(status)".utf8))
    }
    try await kind.withTransport { transport in
      for status in [200, 201, 204, 400, 401, 404, 418, 429, 500, 503] {
        let response = try await transport.send(HTTPRequest(url: server.url("/\(status)")))
        #expect(response.status == status)
        #expect(response.headers["X-Status"] == "\(status)")
        #expect(String(decoding: response.body, as: UTF8.self) == (status == 204 ? "" : "status \(status)"))
      }
    }
    try await server.stop()
  }

  @Test(
    "a path and query with & = + space / ? # % and emoji reach the server byte for byte",
    arguments: TransportKind.allCases)
  func exactTarget(kind: TransportKind) async throws {
    let server = try await TestServer.start { _ in .status(200) }
    let encoded = "a%26b%3Dc%2Bd%20e%2Ff%3Fg%23h%25i%F0%9F%98%80"
    let target = "/items/\(encoded)/x?q=\(encoded)&q=2&plus=%2B&empty="
    try await kind.withTransport { transport in
      let response = try await transport.send(HTTPRequest(url: server.url(target)))
      #expect(response.status == 200)
    }
    let received = try #require(server.requests.first)
    #expect(received.uri == target)
    #expect(received.path == "/items/a&b=c+d e/f?g#h%i😀/x")
    try await server.stop()
  }

  @Test("a slow, trickling body arrives whole", arguments: TransportKind.allCases)
  func slowBody(kind: TransportKind) async throws {
    let server = try await TestServer.start { _ in
      TestResponse(status: 200, body: TestResponse.pattern(count: 2_000)).trickled(
        chunkSize: 100, every: .milliseconds(10))
    }
    try await kind.withTransport { transport in
      let response = try await transport.send(HTTPRequest(url: server.url("/slow")))
      #expect(response.body == Data(TestResponse.pattern(count: 2_000)))
    }
    try await server.stop()
  }

  @Test("a huge body without a limit arrives whole", arguments: TransportKind.allCases)
  func hugeBody(kind: TransportKind) async throws {
    let size = 16 * 1024 * 1024
    let server = try await TestServer.start { _ in .generated(size) }
    try await kind.withTransport { transport in
      let response = try await transport.send(HTTPRequest(url: server.url("/huge")))
      #expect(response.body.count == size)
      #expect(response.body.prefix(1000) == Data(TestResponse.pattern(count: 1000)))
      #expect(response.body.last == TestResponse.patternByte(at: size - 1))
    }
    try await server.stop()
  }

  @Test(
    "progress is reported as the body arrives and never goes backwards", arguments: TransportKind.allCases)
  func progress(kind: TransportKind) async throws {
    let size = 256 * 1024
    let server = try await TestServer.start { request in
      let response = TestResponse.generated(size).trickled(chunkSize: 16 * 1024, every: .milliseconds(5))
      return request.path == "/chunked" ? response.withoutContentLength() : response
    }
    try await kind.withTransport { transport in
      for path in ["/length", "/chunked"] {
        let reports = Recorder<(Int64, Int64?)>()
        let options = TransportOptions(onProgress: { received, expected in reports.append((received, expected)) })
        let response = try await transport.send(HTTPRequest(url: server.url(path)), options: options)
        #expect(response.body.count == size)
        let values = reports.values
        #expect(values.count >= 2, "\(path): \(values.count) reports")
        #expect(zip(values, values.dropFirst()).allSatisfy { $0.0 < $1.0 }, "\(path) went backwards")
        #expect(values.last?.0 == Int64(size))
        if path == "/length" {
          #expect(values.allSatisfy { $0.1 == Int64(size) })
        } else {
          #expect(values.allSatisfy { $0.1 == nil })
        }
      }
    }
    try await server.stop()
  }

  @Test(
    "200 concurrent requests on one transport all get their own answer over reused connections",
    arguments: TransportKind.allCases)
  func concurrency(kind: TransportKind) async throws {
    let server = try await TestServer.start { request in .text(request.query["id"] ?? "-") }
    try await kind.withTransport { transport in
      try await withThrowingTaskGroup(of: (Int, String).self) { group in
        for id in 0..<200 {
          group.addTask {
            let response = try await transport.send(HTTPRequest(url: server.url("/c?id=\(id)")))
            return (id, String(decoding: response.body, as: UTF8.self))
          }
        }
        var answered = 0
        for try await (id, body) in group {
          #expect(body == "\(id)")
          answered += 1
        }
        #expect(answered == 200)
      }
    }
    #expect(server.requests.count == 200)
    #expect(server.connectionCount < 200, "one session per transport reuses its connections")
    try await server.stop()
  }

  @Test("sequential requests on one transport share one connection", arguments: TransportKind.allCases)
  func connectionReuse(kind: TransportKind) async throws {
    let server = try await TestServer.start { _ in .text("ok") }
    try await kind.withTransport { transport in
      for _ in 0..<5 {
        _ = try await transport.send(HTTPRequest(url: server.url("/again")))
      }
    }
    #expect(server.requests.count == 5)
    #expect(Set(server.requests.map(\.connection)).count == 1)
    try await server.stop()
  }
}
