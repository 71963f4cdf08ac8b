/// A query whose loads join the load of the same key already in flight in a ``SharedLoads``
/// registry.
///
/// Create one with ``KilnCore/Query/shared(by:in:)``.
@frozen
public struct SharedQuery<Upstream: Query, Key: Hashable & Sendable>: Query {
  public typealias Success = Upstream.Success
  public typealias Failure = Upstream.Failure

  /// The query that runs when no load of ``key`` is in flight.
  public let upstream: Upstream

  /// What the load is for.
  public let key: Key

  /// The registry shared with the other queries of this key.
  public let loads: SharedLoads<Key>

  @inlinable
  init(upstream: Upstream, key: Key, loads: SharedLoads<Key>) {
    self.upstream = upstream
    self.key = key
    self.loads = loads
  }

  @inlinable
  public func load() async throws(Failure) -> Success {
    try await loads.outcome(for: key, using: upstream).get()
  }
}

extension Query {
  /// Shares each load with every query that loads the same `key` through `loads` at the same
  /// time: single flight per key.
  ///
  /// ```swift
  /// let loads = SharedLoads<URL>()
  /// let avatar = ImageQuery(url: url).shared(by: url, in: loads)
  /// // Ten cells asking for the same avatar at once make one request.
  /// ```
  ///
  /// Nothing is cached: a load that starts after the shared one finished starts a new one.
  /// Cancelling a caller detaches it (with `CancellationError` when `Failure` can hold one);
  /// the shared load is cancelled only when all of its callers are.
  ///
  /// - Parameters:
  ///   - key: What this query loads. Every query loading the same resource must use the same
  ///     key, and queries with the same key must load the same resource.
  ///   - loads: The registry shared by the queries that should de-duplicate their loads.
  /// - Returns: A query that joins the load of `key` in flight, or starts this one.
  @inlinable
  public func shared<Key>(by key: Key, in loads: SharedLoads<Key>) -> SharedQuery<Self, Key> {
    SharedQuery(upstream: self, key: key, loads: loads)
  }
}
