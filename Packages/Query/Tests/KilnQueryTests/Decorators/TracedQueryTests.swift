#if Tracing
  import InMemoryTracing
  import KilnQuery
  import Testing
  import Tracing

  /// A query that reports the span it runs under.
  private struct SpanReporting: Query {
    func load() async throws(APIError) -> String? {
      ServiceContext.current.flatMap { $0.inMemorySpanContext?.spanID }
    }
  }

  @Suite("traced(_:tracer:) (Tracing trait)")
  struct TracedQueryTests {
    @Test("each load is a span, child of the caller's, current while the upstream loads")
    func spans() async throws {
      let tracer = InMemoryTracer()
      let query = SpanReporting().traced("load profile", tracer: tracer)
      let caller = tracer.startSpan("request")
      let seen = try await ServiceContext.withValue(caller.context) { try await query.load() }
      _ = try await query.load()
      caller.end()
      let spans = tracer.finishedSpans.filter { $0.operationName == "load profile" }
      #expect(spans.count == 2)
      #expect(spans[0].parentSpanID == caller.spanContext.spanID)
      #expect(spans[0].traceID == caller.traceID)
      #expect(seen == spans[0].spanID)
      #expect(spans[1].parentSpanID == nil)
      #expect(spans[0].kind == .internal)
      #expect(spans[0].status == nil)
    }

    @Test("with the no-op tracer a load runs as the upstream's, in the caller's context")
    func noOpTracer() async throws {
      let tracer = InMemoryTracer()
      let caller = tracer.startSpan("request")
      let seen = try await ServiceContext.withValue(caller.context) {
        try await SpanReporting().traced("load", tracer: NoOpTracer()).load()
      }
      #expect(seen == caller.spanContext.spanID)
      #expect(try await TypedQuery(outcome: .success(7)).traced("load", tracer: NoOpTracer()).load() == 7)
    }

    @Test("a failed load records its typed error on the span and passes it on unchanged")
    func failure() async {
      let tracer = InMemoryTracer()
      let result = await outcome { () async throws(APIError) in
        try await TypedQuery(outcome: .failure(.offline)).traced("fetch", tracer: tracer).load()
      }
      #expect(result == .failure(.offline))
      let span = tracer.finishedSpans[0]
      #expect(span.status?.code == .error)
      #expect(span.errors.count == 1)
      #expect(span.attributes["error.type"]?.toSpanAttribute() == .string("APIError"))
    }
  }
#endif
