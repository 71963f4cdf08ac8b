import _KilnSynchronization

/// A query that fails with ``QueryTimeoutError/timedOut(after:)`` when its upstream does not
/// finish in time.
///
/// Create one with ``KilnCore/Query/timeout(_:clock:)``.
@frozen
public struct TimeoutQuery<Upstream: Query>: Query {
  public typealias Success = Upstream.Success
  public typealias Failure = QueryTimeoutError<Upstream.Failure>

  /// The query given a time limit.
  public let upstream: Upstream

  /// How long the upstream may take.
  public let limit: Duration

  /// The clock the limit is measured on.
  public let clock: any Clock<Duration>

  @inlinable
  init(upstream: Upstream, limit: Duration, clock: any Clock<Duration>) {
    self.upstream = upstream
    self.limit = limit
    self.clock = clock
  }

  @inlinable
  public func load() async throws(Failure) -> Success {
    switch await outcome() {
    case .success(let value): return value
    case .failure(let failure): throw failure
    }
  }

  @usableFromInline
  func outcome() async -> Result<Success, Failure> {
    let upstream = upstream
    let limit = limit
    return await Race.run(
      within: limit,
      clock: clock,
      { await upstream.result().mapError { .failed($0) } },
      timedOut: { .failure(.timedOut(after: limit)) },
      cancelled: { .failure(.cancelled) }
    )
  }
}

extension Query {
  /// Fails with ``QueryTimeoutError/timedOut(after:)`` when a load takes longer than `limit`.
  ///
  /// ```swift
  /// let feed = network.timeout(.seconds(10))
  /// // some Query<Feed, QueryTimeoutError<any Error>>
  /// ```
  ///
  /// The load returns at the limit even if the upstream ignores cancellation: the upstream
  /// runs in its own task, which is cancelled and left to finish on its own. Its own failures
  /// arrive as ``QueryTimeoutError/failed(_:)``, and cancelling the caller ends the load at
  /// once with ``QueryTimeoutError/cancelled``.
  ///
  /// - Parameters:
  ///   - limit: How long a load may take.
  ///   - clock: The clock the limit is measured on; pass a `ManualClock` in tests.
  /// - Returns: A query whose failure says whether the load timed out, failed, or was
  ///   cancelled.
  @inlinable
  public func timeout(
    _ limit: Duration,
    clock: any Clock<Duration> = ContinuousClock()
  ) -> TimeoutQuery<Self> {
    TimeoutQuery(upstream: self, limit: limit, clock: clock)
  }
}
