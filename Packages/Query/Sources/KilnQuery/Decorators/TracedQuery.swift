#if Tracing
  public import Tracing

  /// A query whose every load runs in a span of its own (the `Tracing` trait).
  ///
  /// Create one with ``KilnCore/Query/traced(_:tracer:)``.
  public struct TracedQuery<Upstream: Query>: Query {
    public typealias Success = Upstream.Success
    public typealias Failure = Upstream.Failure

    /// The query whose loads are traced.
    public let upstream: Upstream

    /// The spans' name.
    public let operationName: String

    /// Starts the spans.
    public let tracer: any Tracer

    public func load() async throws(Failure) -> Success {
      // The no-op tracer (nothing bootstrapped) records and propagates nothing.
      if tracer is NoOpTracer { return try await upstream.load() }
      let span = tracer.startSpan(operationName, context: ServiceContext.current ?? .topLevel, ofKind: .internal)
      let result: Result<Success, Failure> = await ServiceContext.withValue(span.context) {
        do throws(Failure) {
          return .success(try await upstream.load())
        } catch {
          return .failure(error)
        }
      }
      if case .failure(let error) = result {
        span.recordError(error)
        span.setStatus(SpanStatus(code: .error))
        span.attributes["error.type"] = String(describing: type(of: error))
      }
      span.end()
      return try result.get()
    }
  }

  extension Query {
    /// Runs each load in a span named `operationName`, a child of the task's `ServiceContext`:
    /// the request spans of a KilnNetwork pipeline below it become its children.
    ///
    /// ```swift
    /// let profile = network.retry(.default).traced("load profile")
    /// ```
    ///
    /// A failed load records its error on the span and marks it as an error, with `error.type`
    /// set to the failure's type name. Put it outermost to trace what a caller waits for, or
    /// below `shared`/`serial` to trace only the loads that run.
    ///
    /// - Parameters:
    ///   - operationName: The spans' name: what is loaded, from a small set (not an ID).
    ///   - tracer: The tracer; by default the one bootstrapped in `InstrumentationSystem`.
    /// - Returns: A query with the same outcomes.
    public func traced(_ operationName: String, tracer: any Tracer = InstrumentationSystem.tracer) -> TracedQuery<Self>
    {
      TracedQuery(upstream: self, operationName: operationName, tracer: tracer)
    }
  }
#endif
