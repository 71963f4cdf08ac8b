#if Metrics
  public import CoreMetrics
  import _KilnSynchronization

  /// Times each request that passes with a swift-metrics `Timer`: the metrics stage of the
  /// request pipeline (the `Metrics` trait).
  ///
  /// ```swift
  /// let chain = RequestChain(
  ///   transport: transport,
  ///   middleware: [RequestMetrics(), HTTPCaching(cache), Retrying(.default)]
  /// )
  /// ```
  ///
  /// The timer is `kiln_http_client_request_duration` (nanoseconds), with these dimensions, each
  /// from a bounded set:
  ///
  /// | Dimension | Values |
  /// |---|---|
  /// | `method` | `GET`, `HEAD`, `POST`, `PUT`, `PATCH`, `DELETE`, `OPTIONS`, `other` |
  /// | `outcome` | `1xx` … `5xx` (a response), or `transport`, `timeout`, `cancelled`, `error` (none) |
  /// | `cache` | `hit` (answered by an HTTP cache below the stage), `forward` (it asked the origin), `none` (no cache below, or no response) |
  ///
  /// Put it outermost to time what callers wait for, cache hits included. The counters of the
  /// chain, its cache and its stores are published by `MetricsReporter`.
  public struct RequestMetrics: RequestMiddleware {
    /// The metrics backend.
    public let factory: any MetricsFactory

    private let timers: Timers

    /// Creates the stage.
    ///
    /// - Parameter factory: The metrics backend; `MetricsSystem.factory` by default.
    public init(factory: any MetricsFactory = MetricsSystem.factory) {
      self.factory = factory
      timers = Timers(factory: factory)
    }

    public func send(_ request: HTTPRequest, context: RequestContext, next: RequestNext) async throws(NetworkError)
      -> HTTPResponse
    {
      let clock = ContinuousClock()
      let start = clock.now
      let result: Result<HTTPResponse, NetworkError>
      do {
        result = .success(try await next.send(request, context: context))
      } catch {
        result = .failure(error)
      }
      let elapsed = start.duration(to: clock.now)
      timers.timer(for: request.method, result).recordNanoseconds(Self.nanoseconds(elapsed))
      return try result.get()
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
      let (seconds, attoseconds) = duration.components
      return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
  }

  extension RequestMetrics {
    /// One timer per combination of dimensions, made once.
    final class Timers: Sendable {
      struct Key: Hashable {
        let method: String
        let outcome: String
        let cache: String
      }

      static let methods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

      let factory: any MetricsFactory
      private let timers = KilnMutex<[Key: CoreMetrics.Timer]>([:])

      init(factory: any MetricsFactory) {
        self.factory = factory
      }

      func timer(for method: HTTPMethod, _ result: Result<HTTPResponse, NetworkError>) -> CoreMetrics.Timer {
        let key = Key(
          method: Self.methods.contains(method.rawValue) ? method.rawValue : "other",
          outcome: Self.outcome(result), cache: Self.cache(result))
        if let timer = timers.withLock({ $0[key] }) { return timer }
        let timer = CoreMetrics.Timer(
          label: "kiln_http_client_request_duration",
          dimensions: [("method", key.method), ("outcome", key.outcome), ("cache", key.cache)],
          factory: factory)
        return timers.withLock { timers in
          if let existing = timers[key] { return existing }
          timers[key] = timer
          return timer
        }
      }

      /// The status class or kind of failure, as the chain's counters name them (but `error`
      /// for a failure of another kind).
      static func outcome(_ result: Result<HTTPResponse, NetworkError>) -> String {
        switch result {
        case .success(let response): RequestCounter.statusClass(response.status).label
        case .failure(let error):
          switch RequestCounter.failure(error) {
          case .otherFailures: "error"
          case let kind: kind.label
          }
        }
      }

      static func cache(_ result: Result<HTTPResponse, NetworkError>) -> String {
        guard case .success(let response) = result, let status = response.cacheStatus else { return "none" }
        return status.hit ? "hit" : "forward"
      }
    }
  }
#endif
