/// A type-erased ``Query``: built from a closure or from another query.
///
/// Use it to store queries of different concrete types in one property, or to write a
/// small query inline:
///
/// ```swift
/// // Everyday code: `any Error`, the closure literal infers the rest.
/// let answer = AnyQuery<Int, any Error> { try await api.answer() }
///
/// // A typed failure is opt-in: annotate the closure's `throws` clause, because
/// // Swift does not infer a typed `throws` for a closure literal.
/// let typed = AnyQuery { () async throws(APIError) -> Int in
///   try await api.typedAnswer()
/// }
///
/// // Erasing another query keeps its typed failure.
/// let erased: AnyQuery<Article, APIError> = ArticleQuery(id: 7).eraseToAnyQuery()
/// ```
@frozen
public struct AnyQuery<Success: Sendable, Failure: Error>: Query {
  @usableFromInline
  let body: @Sendable () async throws(Failure) -> Success

  /// Creates a query that runs `body` on each load.
  ///
  /// - Parameter body: The work of one load. For a typed failure, annotate the closure:
  ///   `{ () async throws(MyError) -> Int in ... }`.
  @inlinable
  public init(_ body: @escaping @Sendable () async throws(Failure) -> Success) {
    self.body = body
  }

  /// Erases another query, keeping its success and failure types.
  ///
  /// Erasing an `AnyQuery` again does not add another layer.
  ///
  /// - Parameter upstream: The query to load from.
  @inlinable
  public init<Upstream: Query>(_ upstream: Upstream)
  where Upstream.Success == Success, Upstream.Failure == Failure {
    if let erased = upstream as? AnyQuery<Success, Failure> {
      self = erased
    } else {
      self.body = { () async throws(Failure) -> Success in try await upstream.load() }
    }
  }

  @inlinable
  public func load() async throws(Failure) -> Success {
    try await body()
  }
}

extension AnyQuery {
  /// A query whose every load succeeds with `value`.
  ///
  /// - Parameter value: The value each load returns.
  @inlinable
  public static func success(_ value: Success) -> AnyQuery {
    AnyQuery { () async throws(Failure) -> Success in value }
  }

  /// A query whose every load fails with `error`.
  ///
  /// - Parameter error: The error each load throws.
  @inlinable
  public static func failure(_ error: Failure) -> AnyQuery {
    AnyQuery { () async throws(Failure) -> Success in throw error }
  }

  /// A query whose every load returns `result`.
  ///
  /// - Parameter result: The outcome of each load.
  @inlinable
  public init(result: Result<Success, Failure>) {
    self.init { () async throws(Failure) -> Success in try result.get() }
  }
}
