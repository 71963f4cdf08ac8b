import KilnQuery

/// Lets identical `GET` requests in flight at the same time share one pass through the rest of
/// the chain: the single-flight stage of the request pipeline.
///
/// Requests are identical when their method, URL and headers are (and neither has a body),
/// leaving out the fields named in ``ignoredFields``: by default the trace context a tracer
/// writes into each request (``traceContextFields``), which differs from caller to caller and
/// does not change the answer. Every caller gets the shared response, and a caller who joined and is cancelled leaves at
/// once. Progress is reported to the caller that started it. Put it outermost: what it shares
/// is everything after it (the cache, the retries, the refresh).
///
/// ## Who runs the shared request
///
/// By default the first caller sends the request itself, in its own task, as it would
/// without the stage: a request nobody shares costs no task. Cancelling that caller cancels
/// the request. When the request then fails while other callers still wait, they get a new
/// one (a `GET` is safe to repeat), sent once the first has ended, so identical requests
/// through the stage never overlap; when it succeeds anyway, they get its response.
///
/// With `detached: true` every shared request runs in a task of its own instead, and is
/// cancelled only when its last caller leaves: a caller's cancellation never costs the others
/// a second request, at the price of a task per request. Choose it where the first caller is
/// often cancelled while others wait, as in a gateway whose clients disconnect.
public struct Deduplicating: RequestMiddleware {
  let flights: SharedLoads<HTTPRequest>

  /// Whether each shared request runs in a task of its own, rather than in its first
  /// caller's task.
  public let detached: Bool

  /// The header fields left out when requests are compared, in any case:
  /// ``traceContextFields`` by default.
  ///
  /// A request that carries one of them shares a flight with requests that differ from it
  /// only there, and the request sent is the first caller's, with its values. Add the fields
  /// your callers set per request that do not change the response (a request id), or set it
  /// empty to compare every field.
  ///
  /// ```swift
  /// var deduplicating = Deduplicating()
  /// deduplicating.ignoredFields += ["X-Request-ID"]
  /// ```
  public var ignoredFields: [String] = Deduplicating.traceContextFields

  /// The fields that carry a distributed trace from service to service: W3C Trace Context
  /// (`traceparent`, `tracestate`), B3 (`b3` and its `X-B3-` fields), Jaeger's `uber-trace-id`
  /// and AWS X-Ray's `X-Amzn-Trace-Id`.
  ///
  /// Each request through a ``RequestTracing`` stage (or from a caller that forwards its own
  /// trace) carries a value of its own there, so comparing them would share nothing. W3C
  /// `baggage` is not among them: it may carry what the service answers by (a tenant, a user).
  public static let traceContextFields = [
    "traceparent", "tracestate", "b3", "X-B3-TraceId", "X-B3-SpanId", "X-B3-ParentSpanId", "X-B3-Sampled",
    "X-B3-Flags", "uber-trace-id", "X-Amzn-Trace-Id",
  ]

  /// Creates the stage, with flights of its own.
  ///
  /// - Parameter detached: `true` to run each shared request in a task of its own, cancelled
  ///   only when its last caller leaves; `false` (the default) to run it in the task of the
  ///   caller who starts it.
  public init(detached: Bool = false) {
    flights = SharedLoads()
    self.detached = detached
  }

  /// The number of shared requests in flight now.
  public var inFlightCount: Int {
    flights.inFlightCount
  }

  /// How many requests went down the chain since the stage was created: one per flight
  /// (requests that are not shareable, such as a `POST`, are not counted).
  public var startedCount: Int {
    flights.startedCount
  }

  /// How many callers joined an identical request in flight instead of sending their own,
  /// since the stage was created: the requests single flight saved.
  public var joinedCount: Int {
    flights.joinedCount
  }

  /// The number of callers sharing the request in flight for `request` now (0 when none is).
  ///
  /// - Parameter request: The request, as it reaches this stage.
  public func callerCount(for request: HTTPRequest) -> Int {
    flights.waiterCount(identity(of: request), Result<HTTPResponse, any Error>.self)
  }

  /// `request` without the fields named in ``ignoredFields``: what identical requests share.
  func identity(of request: HTTPRequest) -> HTTPRequest {
    let ignored = ignoredFields
    guard request.headers.contains(where: { field in ignored.contains { field.hasName($0) } }) else {
      return request
    }
    var identity = request
    identity.headers = HTTPHeaders(request.headers.fields.filter { field in !ignored.contains { field.hasName($0) } })
    return identity
  }

  public func send(_ request: HTTPRequest, context: RequestContext, next: RequestNext) async throws(NetworkError)
    -> HTTPResponse
  {
    guard request.method == .get, request.body == nil else {
      return try await next.send(request, context: context)
    }
    let shared = Rest(request: request, context: context, next: next)
    let key = identity(of: request)
    do {
      if detached { return try await flights.load(key, using: shared) }
      return try await flights.loadInline(key, using: shared)
    } catch let error as NetworkError {
      throw error
    } catch {
      throw .cancelled
    }
  }
}

extension Deduplicating {
  /// The rest of the chain for one request, as the query a flight shares: a value rather than
  /// a closure, so that sharing it allocates no context. Its failure is `any Error`, so that a
  /// cancelled caller who joined leaves at once.
  struct Rest: Query {
    let request: HTTPRequest
    let context: RequestContext
    let next: RequestNext

    func load() async throws -> HTTPResponse {
      try await next.send(request, context: context)
    }
  }
}
