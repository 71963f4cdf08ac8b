#if Tracing
  import Foundation
  public import Tracing

  /// Starts a client span for each request that passes, and carries the trace to the next
  /// service in the request's headers: the tracing stage of the request pipeline (the `Tracing`
  /// trait).
  ///
  /// ```swift
  /// InstrumentationSystem.bootstrap(otelTracer)          // once, in main
  /// let chain = RequestChain(
  ///   transport: transport,
  ///   middleware: [RequestTracing(), HTTPCaching(cache), Retrying(.default), AttemptTimeout(.seconds(10))]
  /// )
  /// ```
  ///
  /// The span is a child of the task's `ServiceContext` (the server request being handled),
  /// is named after the method (`GET`) and carries OpenTelemetry's HTTP client attribute names:
  /// `http.request.method`, `url.full` (without user info, with the values of signature query
  /// items redacted), `server.address`, `server.port`, `http.response.status_code`,
  /// `http.request.resend_count` (on a retried attempt) and `error.type` (the status of a 4xx
  /// or 5xx response, or the kind of failure: `timeout`, `transport`, `cancelled`, ...). Kiln
  /// adds `kiln.cache.hit` and `kiln.cache.forward` from the response's `Cache-Status`, and an
  /// event `kiln.retry` for each retry ``Retrying`` begins below the stage.
  ///
  /// The tracer's instrument writes the span's context into the request's headers (W3C
  /// `traceparent` and `tracestate` with an OpenTelemetry tracer) before the request goes on,
  /// so the service called continues the same trace.
  ///
  /// With the `NoOpTracer` (nothing bootstrapped) the stage hands each request straight on, at
  /// the cost of a branch.
  ///
  /// **Where to put it.** Outermost, it traces each request once, cache hits included. Put a
  /// second one innermost (inside ``Retrying``) to trace each attempt as a child span: the
  /// header then names the attempt's span.
  public struct RequestTracing: RequestMiddleware {
    /// Starts the spans and injects their context.
    public let tracer: any Tracer

    /// Creates the stage.
    ///
    /// - Parameter tracer: The tracer; by default the one bootstrapped in
    ///   `InstrumentationSystem`.
    public init(tracer: any Tracer = InstrumentationSystem.tracer) {
      self.tracer = tracer
      passesThrough = tracer is NoOpTracer
    }

    /// Whether the tracer is swift-distributed-tracing's `NoOpTracer` (what
    /// `InstrumentationSystem` gives when nothing was bootstrapped): it records nothing and
    /// injects nothing, so the stage hands requests straight on.
    private let passesThrough: Bool

    /// The span of the request the current task is sending, set by the innermost
    /// ``RequestTracing`` stage around it: ``Retrying`` adds its events to it.
    @TaskLocal static var currentSpan: (any Span)?

    public func send(_ request: HTTPRequest, context: RequestContext, next: RequestNext) async throws(NetworkError)
      -> HTTPResponse
    {
      if passesThrough { return try await next.send(request, context: context) }
      let parent = ServiceContext.current ?? .topLevel
      let span = tracer.startSpan(request.method.rawValue, context: parent, ofKind: .client)
      // A span the tracer does not record (sampled out, or a no-op tracer) gets no attributes:
      // building them (the URL's parts, the redacted URL) is most of the stage's cost.
      let isRecording = span.isRecording
      if isRecording { Self.describe(request, attempt: context.attempt, in: span) }
      var sent = request
      tracer.inject(span.context, into: &sent.headers, using: HTTPHeadersInjector())
      let result: Result<HTTPResponse, NetworkError> = await ServiceContext.withValue(span.context) {
        await Self.$currentSpan.withValue(span) {
          do throws(NetworkError) {
            return .success(try await next.send(sent, context: context))
          } catch {
            return .failure(error)
          }
        }
      }
      switch result {
      case .success where !isRecording:
        break
      case .success(let response):
        span.attributes["http.response.status_code"] = response.status
        if let status = response.cacheStatus {
          span.attributes["kiln.cache.hit"] = status.hit
          if let forward = status.forward { span.attributes["kiln.cache.forward"] = forward.rawValue }
        }
        if response.status >= 400 {
          span.attributes["error.type"] = String(response.status)
          span.setStatus(SpanStatus(code: .error))
        }
      case .failure(let error):
        span.attributes["error.type"] = Self.errorType(error)
        span.recordError(error)
        span.setStatus(SpanStatus(code: .error))
      }
      span.end()
      return try result.get()
    }

    static func describe(_ request: HTTPRequest, attempt: Int, in span: any Span) {
      span.attributes["http.request.method"] = request.method.rawValue
      span.attributes["url.full"] = redactedURL(request.url)
      if let host = request.url.host() { span.attributes["server.address"] = host }
      if let port = request.url.port ?? (request.url.scheme == "https" ? 443 : request.url.scheme == "http" ? 80 : nil)
      {
        span.attributes["server.port"] = port
      }
      if attempt > 1 { span.attributes["http.request.resend_count"] = attempt - 1 }
    }

    /// The query items whose values OpenTelemetry asks instrumentations to redact.
    static let sensitiveQueryItems: Set<String> = ["awsaccesskeyid", "signature", "sig", "x-goog-signature"]

    /// `url` without user info, with the values of signature query items replaced by `REDACTED`.
    static func redactedURL(_ url: URL) -> String {
      guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
        return url.absoluteString
      }
      if components.user != nil || components.password != nil {
        components.user = "REDACTED"
        components.password = nil
      }
      if let items = components.percentEncodedQueryItems,
        items.contains(where: { sensitiveQueryItems.contains($0.name.lowercased()) })
      {
        components.percentEncodedQueryItems = items.map { item in
          sensitiveQueryItems.contains(item.name.lowercased()) ? URLQueryItem(name: item.name, value: "REDACTED") : item
        }
      }
      return components.string ?? url.absoluteString
    }

    /// OpenTelemetry's `error.type` of a request that ended with `error`.
    static func errorType(_ error: NetworkError) -> String {
      switch error {
      case .cancelled, .transport(.cancelled): "cancelled"
      case .timedOut, .transport(.timedOut): "timeout"
      case .transport: "transport"
      case .authentication: "authentication"
      case .status(let response): String(response.status)
      default: "other"
      }
    }
  }

  /// Writes a trace context into a request's header fields.
  struct HTTPHeadersInjector: Injector {
    func inject(_ value: String, forKey key: String, into headers: inout HTTPHeaders) {
      headers[key] = value
    }
  }

  extension RequestTracing {
    /// Adds an event for a retry ``Retrying`` decided on to `span`: why, after which attempt,
    /// and how long the wait before the next one is.
    static func recordRetry(after error: NetworkError, attempt: Int, delay: Duration, in span: any Span) {
      let reason: String = if case .status(let response) = error { String(response.status) } else { errorType(error) }
      span.addEvent(
        SpanEvent(
          name: "kiln.retry",
          attributes: [
            "kiln.retry.reason": .string(reason), "kiln.retry.failed_attempt": .int64(Int64(attempt)),
            "kiln.retry.delay_ms": .int64(
              Int64(delay.components.seconds * 1_000 + delay.components.attoseconds / 1_000_000_000_000_000)),
          ]))
    }
  }
#endif
