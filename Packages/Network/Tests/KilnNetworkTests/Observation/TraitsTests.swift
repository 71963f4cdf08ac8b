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

    @Test(
      "W3C traceparent carries the trace across two services over loopback; identical GETs under different traces still share one request"
    )
    func w3cAcrossServices() async throws {
      let tracer = W3CTracer()
      // Service C, the origin: records what it was sent.
      let origin = try await TestServer.start { _ in
        .text("feed")
      }
      // Service B, a gateway: continues the trace its caller sent, and calls C through Kiln.
      let outbound = RequestChain(
        transport: URLSessionTransport(), middleware: [RequestTracing(tracer: tracer), Deduplicating()])
      let gateway = try await TestServer.start { request in
        var incoming = ServiceContext.topLevel
        tracer.extract(request.headers, into: &incoming, using: TestHeadersExtractor())
        let handling = tracer.startSpan("GET /gateway", context: incoming, ofKind: .server)
        defer { handling.end() }
        let answer = await ServiceContext.withValue(handling.context) {
          try? await outbound.send(HTTPRequest(url: origin.url("/feed")))
        }
        return answer.map { TestResponse(status: $0.status, body: [UInt8]($0.body)) } ?? .status(502)
      }
      // Service A calls B through Kiln, inside its own span.
      let inbound = RequestChain(transport: URLSessionTransport(), middleware: [RequestTracing(tracer: tracer)])
      let caller = tracer.startSpan("handle /home", ofKind: .server)
      let response = try await ServiceContext.withValue(caller.context) {
        try await inbound.send(HTTPRequest(url: gateway.url("/gateway")))
      }
      caller.end()
      #expect(response.status == 200)
      #expect(response.body == Data("feed".utf8))

      // One trace, four spans, each the child of the one before: A's server span, A's client
      // span, B's server span, B's client span; and C was told B's client span.
      let spans = tracer.finishedSpans
      #expect(spans.count == 4)
      #expect(Set(spans.map(\.traceID)) == [caller.traceID])
      let toGateway = try #require(spans.first { $0.parentSpanID == caller.spanContext.spanID })
      let handling = try #require(spans.first { $0.operationName == "GET /gateway" })
      #expect(handling.parentSpanID == toGateway.spanID)
      let toOrigin = try #require(spans.first { $0.parentSpanID == handling.spanID })
      #expect(toOrigin.kind == .client)
      let gatewayRequest = try #require(gateway.requests.first)
      let sentToGateway = gatewayRequest.headerFields.filter { $0.name.lowercased() == "traceparent" }.map { $0.value }
      #expect(sentToGateway == ["00-\(caller.traceID)-\(toGateway.spanID)-01"])
      let sentToOrigin = origin.requests.first?.headers["traceparent"]
      #expect(sentToOrigin == "00-\(caller.traceID)-\(toOrigin.spanID)-01")
      #expect(sentToOrigin?.wholeMatch(of: /00-[0-9a-f]{32}-[0-9a-f]{16}-01/) != nil)
      #expect(caller.traceID.count == 32)

      // Two callers of B in different traces ask for the same feed at once: the tracing stage
      // gives each its own traceparent, and Deduplicating still sends one request to C.
      try await gateway.stop()
      let released = KilnMutex(false)
      let slowOrigin = try await TestServer.start { _ in
        while !released.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(5)) }
        return .text("slow")
      }
      let shared = RequestChain(
        transport: URLSessionTransport(), middleware: [RequestTracing(tracer: tracer), Deduplicating()])
      let deduplicating = try #require(shared.first(Deduplicating.self))
      let feed = HTTPRequest(url: slowOrigin.url("/feed"))
      async let one = ServiceContext.withValue(tracer.startSpan("one", ofKind: .server).context) {
        try await shared.send(feed)
      }
      async let two = ServiceContext.withValue(tracer.startSpan("two", ofKind: .server).context) {
        try await shared.send(feed)
      }
      #expect(await poll(timeout: .seconds(30)) { deduplicating.callerCount(for: feed) == 2 })
      released.withLock { $0 = true }
      let (first, second) = try await (one, two)
      #expect(first.body == second.body)
      #expect(slowOrigin.requests.count == 1)
      #expect(deduplicating.joinedCount == 1)
      try await slowOrigin.stop()
      try await origin.stop()
    }
  }

  /// A tracer that propagates W3C Trace Context the way OpenTelemetry's does: an
  /// `InMemoryTracer` with 16-byte trace and 8-byte span identifiers in lowercase hex, whose
  /// instrument writes and reads `traceparent` (sampled) instead of the in-memory keys.
  struct W3CTracer: Tracer {
    let base = InMemoryTracer(
      idGenerator: .init(nextTraceID: { W3CTracer.hex(bytes: 16) }, nextSpanID: { W3CTracer.hex(bytes: 8) }))

    var finishedSpans: [FinishedInMemorySpan] { base.finishedSpans }

    static func hex(bytes: Int) -> String {
      (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    func startSpan<Instant: TracerInstant>(
      _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
      at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> InMemorySpan {
      base.startSpan(
        operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID, line: line)
    }

    func forceFlush() { base.forceFlush() }

    func inject<Carrier, Inject: Injector>(
      _ context: ServiceContext, into carrier: inout Carrier, using injector: Inject
    )
    where Carrier == Inject.Carrier {
      guard let span = context.inMemorySpanContext else { return }
      injector.inject("00-\(span.traceID)-\(span.spanID)-01", forKey: "traceparent", into: &carrier)
    }

    func extract<Carrier, Extract: Extractor>(
      _ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract
    ) where Carrier == Extract.Carrier {
      guard let value = extractor.extract(key: "traceparent", from: carrier),
        let match = value.wholeMatch(of: /00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]/)
      else { return }
      context.inMemorySpanContext = InMemorySpanContext(
        traceID: String(match.1), spanID: String(match.2), parentSpanID: nil)
    }
  }

  /// Reads a trace context from the loopback server's request headers (lowercased names).
  struct TestHeadersExtractor: Extractor {
    func extract(key: String, from headers: [String: String]) -> String? {
      headers[key.lowercased()]
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
