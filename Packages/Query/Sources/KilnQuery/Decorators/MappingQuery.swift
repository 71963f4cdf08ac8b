/// A query that transforms its upstream's value.
///
/// Create one with ``KilnCore/Query/map(_:)``.
@frozen
public struct MappingQuery<Upstream: Query, Success: Sendable>: Query {
  public typealias Failure = Upstream.Failure

  /// The query whose value is transformed.
  public let upstream: Upstream

  @usableFromInline
  let transform: @Sendable (Upstream.Success) -> Success

  @inlinable
  init(upstream: Upstream, transform: @escaping @Sendable (Upstream.Success) -> Success) {
    self.upstream = upstream
    self.transform = transform
  }

  @inlinable @inline(__always)
  public func load() async throws(Failure) -> Success {
    transform(try await upstream.load())
  }
}

extension Query {
  /// Transforms each loaded value; failures pass through unchanged.
  ///
  /// ```swift
  /// let titles = articles.map { $0.map(\.title) }
  /// ```
  ///
  /// The transform cannot fail. To map into something that can fail, use `map(with:)`;
  /// to chain another query, ``flatMap(_:)``.
  ///
  /// - Parameter transform: Maps a loaded value; called once per successful load.
  /// - Returns: A query with the transformed value and the same failure.
  @inlinable
  public func map<NewSuccess>(
    _ transform: @escaping @Sendable (Success) -> NewSuccess
  ) -> MappingQuery<Self, NewSuccess> {
    MappingQuery(upstream: self, transform: transform)
  }
}
