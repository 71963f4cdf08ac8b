import KilnQuery

/// Lets identical `GET` requests in flight at the same time share one pass through the rest of
/// the chain: the single-flight stage of the request pipeline.
///
/// Requests are identical when their method, URL and headers are (and neither has a body).
/// Every caller gets the shared response; a caller that is cancelled leaves at once, and the
/// shared request is cancelled only when its last caller leaves. Progress is reported to the
/// caller that started it. Put it outermost: what it shares is everything after it (the cache,
/// the retries, the refresh).
public struct Deduplicating: RequestMiddleware {
  let flights: SharedLoads<HTTPRequest>

  /// Creates the stage, with flights of its own.
  public init() {
    flights = SharedLoads()
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
    flights.waiterCount(request, Result<HTTPResponse, any Error>.self)
  }

  public func send(_ request: HTTPRequest, context: RequestContext, next: RequestNext) async throws(NetworkError)
    -> HTTPResponse
  {
    guard request.method == .get, request.body == nil else {
      return try await next.send(request, context: context)
    }
    // Shared as `any Error`, so that a cancelled caller leaves at once; the flight is
    // cancelled only when its last caller leaves.
    let shared = AnyQuery<HTTPResponse, any Error> { () async throws -> HTTPResponse in
      try await next.send(request, context: context)
    }
    do {
      return try await flights.load(request, using: shared)
    } catch let error as NetworkError {
      throw error
    } catch {
      throw .cancelled
    }
  }
}
