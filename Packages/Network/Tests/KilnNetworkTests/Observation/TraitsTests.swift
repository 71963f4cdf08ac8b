import Foundation
import KilnCore
import KilnNetwork
import KilnStorage
import KilnTesting
import Testing
import _KilnSynchronization
import _KilnTestServer

#if Tracing
  import InMemoryTracing
  import Tracing

  @Suite("RequestTracing: spans and trace context over loopback (Tracing trait)", .timeLimit(.minutes(1)))
  struct RequestTracingTests {
    @Test(
      "a request span and one span per attempt, children of the caller's span; each attempt carries its own span's context"
    )
    func spansAndContext() async throws {
      let calls = KilnMutex(0)
      let server = try await TestServer.start { _ in
        let call = calls.withLock {
          $0 += 1
          return $0
        }
        return call == 1 ? .status(503) : .text("ok")
      }
      let tracer = InMemoryTracer()
      let chain = RequestChain(
        transport: URLSessionTransport(),
        middleware: [
          RequestTracing(tracer: tracer),
          Retrying(NetworkHandler.RetryPolicy(maxAttempts: 2, backoff: .immediate, jitter: .none)),
          RequestTracing(tracer: tracer),
        ])
      let url = server.url("/items?page=2&sig=secret")
      let caller = tracer.startSpan("handle /feed", ofKind: .server)
      let response = try await ServiceContext.withValue(caller.context) {
        try await chain.send(HTTPRequest(url: url))
      }
      caller.end()
      #expect(response.status == 200)

      let spans = tracer.finishedSpans
      #expect(spans.count == 4)
      let request = try #require(spans.first { $0.parentSpanID == caller.spanContext.spanID })
      let attempts = spans.filter { $0.parentSpanID == request.spanID }
      #expect(attempts.count == 2)
      #expect(request.operationName == "GET")
      #expect(request.kind == .client)
      #expect(request.traceID == caller.traceID)
      #expect(request.attributes["http.request.method"]?.toSpanAttribute() == .string("GET"))
      let redacted = url.absoluteString.replacingOccurrences(of: "secret", with: "REDACTED")
      #expect(request.attributes["url.full"]?.toSpanAttribute() == .string(redacted))
      #expect(request.attributes["server.address"]?.toSpanAttribute() == .string("127.0.0.1"))
      #expect(request.attributes["server.port"]?.toSpanAttribute() == .int64(Int64(server.port)))
      #expect(request.attributes["http.response.status_code"]?.toSpanAttribute() == .int64(200))
      #expect(request.events.map(\.name) == ["kiln.retry"])
      #expect(request.events.first?.attributes["kiln.retry.reason"]?.toSpanAttribute() == .string("503"))
      let first = try #require(attempts.first { $0.attributes["http.request.resend_count"] == nil })
      let second = try #require(attempts.first { $0.attributes["http.request.resend_count"] != nil })
      #expect(first.attributes["error.type"]?.toSpanAttribute() == .string("503"))
      #expect(first.status?.code == .error)
      #expect(second.attributes["http.request.resend_count"]?.toSpanAttribute() == .int64(1))
      #expect(second.status == nil)

      // The server saw each attempt's own span as the parent to continue from.
      let seen = server.requests.map { [$0.headers[InMemoryTracer.traceIDKey], $0.headers[InMemoryTracer.spanIDKey]] }
      #expect(seen == [[caller.traceID, first.spanID], [caller.traceID, second.spanID]])
      try await server.stop()
    }

    @Test("with the no-op tracer the stage hands the request on untouched")
    func noOpTracer() async throws {
      let transport = StubTransport(replies: [.status(200)])
      let chain = RequestChain(transport: transport, middleware: [RequestTracing(tracer: NoOpTracer())])
      let request = HTTPRequest(url: URL(string: "https://api.example.com/a")!, headers: ["Accept": "text/plain"])
      let response = try await chain.send(request)
      #expect(response.status == 200)
      #expect(transport.requests == [request])
    }

    @Test("a cache hit is one span with kiln.cache.hit, and a failure records its error type")
    func cacheAndFailure() async throws {
      let tracer = InMemoryTracer()
      let fresh = StubTransport.Reply.status(
        200, headers: ["Cache-Control": "max-age=60", "Date": HTTPDate.format(Date())], body: Data("x".utf8))
      let cache = HTTPCache(store: MemoryCache<String, Data>(entryLifetime: nil))
      let chain = RequestChain(
        transport: StubTransport(replies: [fresh, .failure(.connectionRefused)]),
        middleware: [RequestTracing(tracer: tracer), HTTPCaching(cache)])
      let url = URL(string: "https://user:pw@api.example.com/a")!
      _ = try await chain.send(HTTPRequest(url: url))
      _ = try await chain.send(HTTPRequest(url: url))
      await #expect(throws: NetworkError.self) {
        try await chain.send(HTTPRequest(url: URL(string: "https://api.example.com/b")!))
      }
      let spans = tracer.finishedSpans
      #expect(spans.count == 3)
      #expect(spans[0].attributes["kiln.cache.hit"]?.toSpanAttribute() == .bool(false))
      #expect(spans[0].attributes["kiln.cache.forward"]?.toSpanAttribute() == .string("uri-miss"))
      #expect(spans[0].attributes["url.full"]?.toSpanAttribute() == .string("https://REDACTED@api.example.com/a"))
      #expect(spans[1].attributes["kiln.cache.hit"]?.toSpanAttribute() == .bool(true))
      #expect(spans[2].attributes["error.type"]?.toSpanAttribute() == .string("transport"))
      #expect(spans[2].errors.count == 1)
      #expect(spans[2].status?.code == .error)
    }
  }
#endif

#if Metrics
  import CoreMetrics
  import MetricsTestKit

  @Suite("RequestMetrics: a timer per request (Metrics trait)", .timeLimit(.minutes(1)))
  struct RequestMetricsTests {
    @Test("each request is timed once, under method, outcome and cache dimensions from bounded sets")
    func timers() async throws {
      let metrics = TestMetrics()
      let server = try await TestServer.start { request in
        request.path == "/gone" ? .status(410) : TestResponse(status: 200, headers: [("Cache-Control", "max-age=60")])
      }
      let cache = HTTPCache(store: MemoryCache<String, Data>(entryLifetime: nil))
      let chain = RequestChain(
        transport: URLSessionTransport(), middleware: [RequestMetrics(factory: metrics), HTTPCaching(cache)])
      _ = try await chain.send(HTTPRequest(url: server.url("/a")))
      _ = try await chain.send(HTTPRequest(url: server.url("/a")))
      _ = try await chain.send(HTTPRequest(method: .post, url: server.url("/gone")))
      _ = try await chain.send(HTTPRequest(method: HTTPMethod(rawValue: "PURGE"), url: server.url("/a")))
      let label = "kiln_http_client_request_duration"
      let miss = try metrics.expectTimer(label, [("method", "GET"), ("outcome", "2xx"), ("cache", "forward")])
      let hit = try metrics.expectTimer(label, [("method", "GET"), ("outcome", "2xx"), ("cache", "hit")])
      let gone = try metrics.expectTimer(label, [("method", "POST"), ("outcome", "4xx"), ("cache", "forward")])
      let other = try metrics.expectTimer(label, [("method", "other"), ("outcome", "2xx"), ("cache", "forward")])
      #expect(miss.values.count == 1)
      #expect(hit.values.count == 1)
      #expect(gone.values.count == 1)
      #expect(other.values.count == 1)
      #expect(miss.values[0] > 0)
      #expect(metrics.timers.count == 4)
      try await server.stop()
    }
  }
#endif

#if Logging
  import InMemoryLogging
  import Logging

  @Suite("LoggingWatch through a swift-log Logger (Logging trait)", .timeLimit(.minutes(1)))
  struct LoggingWatchLoggerTests {
    @Test("each attempt logs at debug with credentials redacted; a logger above the level gets nothing")
    func levels() async throws {
      let server = try await TestServer.start { _ in .text("ok") }
      let handler = InMemoryLogHandler()
      var logger = Logger(label: "test.http") { _ in handler }
      logger.logLevel = .debug
      let chain = RequestChain(
        transport: URLSessionTransport(), middleware: [Watching([LoggingWatch(logger: logger)])])
      _ = try await chain.send(HTTPRequest(url: server.url("/a"), headers: ["Authorization": "Bearer secret"]))
      let entries = handler.entries
      #expect(entries.count == 2)
      #expect(entries.allSatisfy { $0.level == .debug })
      #expect(entries[0].message.description.hasPrefix("→ GET"))
      #expect(entries[0].message.description.contains("Authorization: <redacted>"))
      #expect(!entries[0].message.description.contains("secret"))
      #expect(entries[1].message.description.hasPrefix("← 200"))

      let quiet = InMemoryLogHandler()
      var production = Logger(label: "test.http") { _ in quiet }
      production.logLevel = .info
      let quietChain = RequestChain(
        transport: URLSessionTransport(), middleware: [Watching([LoggingWatch(logger: production)])])
      _ = try await quietChain.send(HTTPRequest(url: server.url("/a")))
      #expect(quiet.entries.isEmpty)
      try await server.stop()
    }
  }
#endif
