/// A query that transforms its upstream's whole outcome (Bricks' `Converter`).
///
/// Create one with ``KilnCore/Query/convert(map:)``.
@frozen
public struct ConvertingQuery<Upstream: Query, Success: Sendable, Failure: Error>: Query {
  /// The query whose outcome is transformed.
  public let upstream: Upstream

  @usableFromInline
  let transform: @Sendable (Result<Upstream.Success, Upstream.Failure>) -> Result<Success, Failure>

  @inlinable
  init(
    upstream: Upstream,
    transform: @escaping @Sendable (Result<Upstream.Success, Upstream.Failure>) -> Result<Success, Failure>
  ) {
    self.upstream = upstream
    self.transform = transform
  }

  @inlinable @inline(__always)
  public func load() async throws(Failure) -> Success {
    try transform(await upstream.result()).get()
  }
}

extension Query {
  /// Transforms each outcome — value or failure — into a new one.
  ///
  /// The most general transform: it can turn a failure into a value (a default), a value into
  /// a failure (validation), and change both types at once.
  ///
  /// ```swift
  /// let count = inbox.convert { result -> Result<Int, Never> in
  ///   .success((try? result.get())?.count ?? 0)    // never fails: 0 when offline
  /// }
  /// ```
  ///
  /// - Parameter transform: Maps the outcome of each load.
  /// - Returns: A query whose outcome is the transformed one.
  @inlinable
  public func convert<NewSuccess, NewFailure>(
    map transform: @escaping @Sendable (Result<Success, Failure>) -> Result<NewSuccess, NewFailure>
  ) -> ConvertingQuery<Self, NewSuccess, NewFailure> {
    ConvertingQuery(upstream: self, transform: transform)
  }
}
