import Foundation
import KilnNetwork
import KilnTesting
import Testing
import _KilnTestServer

/// Every way an exchange fails is a typed ``TransportError``, for every real transport.
@Suite("Transports: failures are typed errors", .timeLimit(.minutes(2)))
struct TransportFailureTests {
  @Test("a port nobody listens on is connectionRefused", arguments: TransportKind.allCases)
  func refused(kind: TransportKind) async throws {
    // Held, not freed: a stopped server's port could be bound again by a test running
    // meanwhile (it failed 1 run in 15 of the network suites beside two builds).
    let closed = try ClosedPort()
    defer { closed.close() }
    let url = URL(string: "http://127.0.0.1:\(closed.port)/gone")!
    try await kind.withTransport { transport in
      let error = await transportError(transport, HTTPRequest(url: url))
      #expect(error == .connectionRefused, "\(String(describing: error))")
    }
  }

  @Test("a connection closed before any response is connectionLost", arguments: TransportKind.allCases)
  func closedBeforeResponse(kind: TransportKind) async throws {
    let server = try await TestServer.start { _ in .closeConnection }
    try await kind.withTransport { transport in
      #expect(await transportError(transport, HTTPRequest(url: server.url("/drop"))) == .connectionLost)
    }
    try await server.stop()
  }

  @Test("a connection dropped mid-body is connectionLost, never a short body", arguments: TransportKind.allCases)
  func droppedMidBody(kind: TransportKind) async throws {
    let server = try await TestServer.start { _ in
      TestResponse.generated(200_000).droppingConnection(afterBodyBytes: 70_000)
    }
    try await kind.withTransport { transport in
      let first = await transportError(transport, HTTPRequest(url: server.url("/cut")))
      #expect(first == .connectionLost, "\(String(describing: first))")
      // The transport is still usable afterwards.
      let second = await transportError(transport, HTTPRequest(url: server.url("/cut")))
      #expect(second == .connectionLost, "\(String(describing: second))")
    }
    try await server.stop()
  }

  @Test(
    "a body over the limit is bodyTooLarge, with and without Content-Length, long before it all arrives",
    arguments: TransportKind.allCases)
  func bodyTooLarge(kind: TransportKind) async throws {
    let size = 256 * 1024 * 1024
    let server = try await TestServer.start { request in
      switch request.path {
      case "/announced": .generated(size)
      case "/chunked": TestResponse.generated(size).withoutContentLength()
      default: .generated(100_000)
      }
    }
    let limit = 1024 * 1024
    let options = TransportOptions(maximumBodySize: limit)
    try await kind.withTransport { transport in
      let started = ContinuousClock.now
      #expect(
        await transportError(transport, HTTPRequest(url: server.url("/announced")), options: options)
          == .bodyTooLarge(limit: limit))
      #expect(
        await transportError(transport, HTTPRequest(url: server.url("/chunked")), options: options)
          == .bodyTooLarge(limit: limit))
      // Reading 256 MiB twice over loopback takes far longer than stopping at 1 MiB.
      #expect(ContinuousClock.now - started < .seconds(10))
      let exact = try await transport.send(
        HTTPRequest(url: server.url("/small")), options: TransportOptions(maximumBodySize: 100_000))
      #expect(exact.body.count == 100_000)
      #expect(
        await transportError(
          transport, HTTPRequest(url: server.url("/small")), options: TransportOptions(maximumBodySize: 99_999))
          == .bodyTooLarge(limit: 99_999))
    }
    try await server.stop()
  }

  @Test("cancelling the calling task cancels the request promptly", arguments: TransportKind.allCases)
  func cancellation(kind: TransportKind) async throws {
    let arrived = AsyncCounter()
    let release = Gate()
    let server = try await TestServer.start { _ in
      arrived.increment()
      try? await release.wait()
      return .text("late")
    }
    try await kind.withTransport { transport in
      let request = Task { await transportError(transport, HTTPRequest(url: server.url("/hang"))) }
      await arrived.wait(untilAtLeast: 1)
      let cancelled = ContinuousClock.now
      request.cancel()
      #expect(await request.value == .cancelled)
      #expect(ContinuousClock.now - cancelled < .seconds(2))
    }
    release.open()
    try await server.stop()
  }

  @Test("a task cancelled before it sends makes no request", arguments: TransportKind.allCases)
  func cancelledBeforeStart(kind: TransportKind) async throws {
    let server = try await TestServer.start { _ in .text("ok") }
    try await kind.withTransport { transport in
      let gate = Gate()
      let request = Task {
        try? await gate.wait()
        return await transportError(transport, HTTPRequest(url: server.url("/never")))
      }
      request.cancel()
      gate.open()
      #expect(await request.value == .cancelled)
    }
    #expect(server.requests.isEmpty)
    try await server.stop()
  }

  @Test("a cancelled slow body ends at once", arguments: TransportKind.allCases)
  func cancelledMidBody(kind: TransportKind) async throws {
    let server = try await TestServer.start { _ in
      TestResponse.generated(1_000_000).trickled(chunkSize: 1_000, every: .milliseconds(20))
    }
    let received = AsyncCounter()
    try await kind.withTransport { transport in
      let request = Task {
        await transportError(
          transport, HTTPRequest(url: server.url("/trickle")),
          options: TransportOptions(onProgress: { _, _ in received.increment() }))
      }
      await received.wait(untilAtLeast: 2)
      let cancelled = ContinuousClock.now
      request.cancel()
      #expect(await request.value == .cancelled)
      #expect(ContinuousClock.now - cancelled < .seconds(2))
    }
    try await server.stop()
  }

  @Test("a server that does not answer within the transport's timeout is timedOut", arguments: TransportKind.allCases)
  func timeout(kind: TransportKind) async throws {
    let release = Gate()
    let server = try await TestServer.start { _ in
      try? await release.wait()
      return .text("late")
    }
    try await kind.withTransport(timeout: .milliseconds(500)) { transport in
      #expect(await transportError(transport, HTTPRequest(url: server.url("/slow"))) == .timedOut)
    }
    release.open()
    try await server.stop()
  }

  @Test(
    "a body in an unknown Content-Encoding is passed through, or a typed error where libcurl refuses it",
    arguments: TransportKind.allCases)
  func unknownContentEncoding(kind: TransportKind) async throws {
    let server = try await TestServer.start { _ in
      TestResponse(status: 200, headers: [("Content-Encoding", "x-kiln")], body: Array("raw bytes".utf8))
    }
    try await kind.withTransport { transport in
      let request = HTTPRequest(url: server.url("/encoded"))
      #if canImport(FoundationNetworking)
        if kind == .urlSession {
          let error = await transportError(transport, request)
          guard case .other = error else {
            Issue.record("expected .other, got \(String(describing: error))")
            return
          }
          return
        }
      #endif
      let response = try await transport.send(request)
      #expect(response.headers["Content-Encoding"] == "x-kiln")
      #expect(String(decoding: response.body, as: UTF8.self) == "raw bytes")
    }
    try await server.stop()
  }

  @Test("a URL that is not absolute http(s) is invalidRequest", arguments: TransportKind.allCases)
  func invalidURL(kind: TransportKind) async throws {
    try await kind.withTransport { transport in
      for url in ["mailto:someone@example.com", "file:///etc/hosts", "/relative/path"] {
        let error = await transportError(transport, HTTPRequest(url: try #require(URL(string: url))))
        guard case .invalidRequest = error else {
          Issue.record("\(url): \(String(describing: error))")
          continue
        }
      }
    }
  }

  @Test("a host name that does not resolve is cannotFindHost", arguments: TransportKind.allCases)
  func unknownHost(kind: TransportKind) async throws {
    try await kind.withTransport(timeout: .seconds(10)) { transport in
      let error = await transportError(transport, HTTPRequest(url: URL(string: "http://kiln-no-such-host.invalid/")!))
      #expect(error == .cannotFindHost)
    }
  }
}
