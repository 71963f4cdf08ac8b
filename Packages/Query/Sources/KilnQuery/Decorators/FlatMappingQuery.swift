/// A query that loads a second query built from its upstream's value.
///
/// Create one with ``KilnCore/Query/flatMap(_:)``.
@frozen
public struct FlatMappingQuery<Upstream: Query, Next: Query>: Query where Next.Failure == Upstream.Failure {
  public typealias Success = Next.Success
  public typealias Failure = Upstream.Failure

  /// The query that loads first.
  public let upstream: Upstream

  @usableFromInline
  let next: @Sendable (Upstream.Success) -> Next

  @inlinable
  init(upstream: Upstream, next: @escaping @Sendable (Upstream.Success) -> Next) {
    self.upstream = upstream
    self.next = next
  }

  @inlinable @inline(__always)
  public func load() async throws(Failure) -> Success {
    try await next(try await upstream.load()).load()
  }
}

extension Query {
  /// Chains a dependent query: loads this one, builds the next from its value, loads that.
  ///
  /// ```swift
  /// let posts = currentUser.flatMap { user in PostsQuery(authorID: user.id) }
  /// ```
  ///
  /// Either failure ends the load. Both queries share the failure type; align them with
  /// ``mapError(_:)`` first when they differ.
  ///
  /// - Parameter next: Builds the second query from the first one's value.
  /// - Returns: A query with the second query's value.
  @inlinable
  public func flatMap<Next: Query>(
    _ next: @escaping @Sendable (Success) -> Next
  ) -> FlatMappingQuery<Self, Next> where Next.Failure == Failure {
    FlatMappingQuery(upstream: self, next: next)
  }
}
