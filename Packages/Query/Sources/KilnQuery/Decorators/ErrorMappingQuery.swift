/// A query that transforms its upstream's failure.
///
/// Create one with ``KilnCore/Query/mapError(_:)``.
@frozen
public struct ErrorMappingQuery<Upstream: Query, Failure: Error>: Query {
  public typealias Success = Upstream.Success

  /// The query whose failure is transformed.
  public let upstream: Upstream

  @usableFromInline
  let transform: @Sendable (Upstream.Failure) -> Failure

  @inlinable
  init(upstream: Upstream, transform: @escaping @Sendable (Upstream.Failure) -> Failure) {
    self.upstream = upstream
    self.transform = transform
  }

  @inlinable @inline(__always)
  public func load() async throws(Failure) -> Success {
    do throws(Upstream.Failure) {
      return try await upstream.load()
    } catch {
      throw transform(error)
    }
  }
}

extension Query {
  /// Transforms each failure; values pass through unchanged.
  ///
  /// Use it to give a pipeline a precise error type, or to translate one layer's errors into
  /// the next layer's:
  ///
  /// ```swift
  /// enum FeedError: Error { case offline, other(any Error) }
  ///
  /// let feed = network.mapError { error -> FeedError in
  ///   (error as? URLError)?.code == .notConnectedToInternet ? .offline : .other(error)
  /// }   // some Query<Feed, FeedError>
  /// ```
  ///
  /// - Parameter transform: Maps a failure; called once per failed load, cancellations
  ///   included.
  /// - Returns: A query with the same value and the transformed failure.
  @inlinable
  public func mapError<NewFailure: Error>(
    _ transform: @escaping @Sendable (Failure) -> NewFailure
  ) -> ErrorMappingQuery<Self, NewFailure> {
    ErrorMappingQuery(upstream: self, transform: transform)
  }
}
