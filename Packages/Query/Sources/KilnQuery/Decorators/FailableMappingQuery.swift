/// A query that maps its upstream's value into a new outcome that can fail
/// (Bricks' `FailableConverter`).
///
/// Create one with `map(with:)`, from a function that returns a `Result` or one that throws.
@frozen
public struct FailableMappingQuery<Upstream: Query, Success: Sendable>: Query {
  public typealias Failure = Upstream.Failure

  /// The query whose value is mapped.
  public let upstream: Upstream

  @usableFromInline
  let transform: @Sendable (Upstream.Success) -> Result<Success, Failure>

  @inlinable
  init(upstream: Upstream, transform: @escaping @Sendable (Upstream.Success) -> Result<Success, Failure>) {
    self.upstream = upstream
    self.transform = transform
  }

  @inlinable @inline(__always)
  public func load() async throws(Failure) -> Success {
    try transform(try await upstream.load()).get()
  }
}

extension Query {
  /// Maps each loaded value into a new `Result`: a new value, or a failure of this query's
  /// failure type.
  ///
  /// ```swift
  /// let article = dto.map(with: { dto -> Result<Article, any Error> in
  ///   dto.title.isEmpty ? .failure(ValidationError.noTitle) : .success(Article(dto))
  /// })
  /// ```
  ///
  /// - Parameter transform: Maps a loaded value to the outcome of the load.
  /// - Returns: A query with the mapped outcome and the same failure type.
  @inlinable
  public func map<NewSuccess>(
    with transform: @escaping @Sendable (Success) -> Result<NewSuccess, Failure>
  ) -> FailableMappingQuery<Self, NewSuccess> {
    FailableMappingQuery(upstream: self, transform: transform)
  }

  /// Maps each loaded value with a function that may throw this query's failure type.
  ///
  /// Reads best with an initializer or a decoding function:
  ///
  /// ```swift
  /// let articles = network.map(with: Article.init)            // (ArticleDTO) -> Article
  /// let decoded = data.map(with: { try JSONDecoder().decode(Feed.self, from: $0) })
  /// ```
  ///
  /// With a typed failure, annotate a throwing closure (Swift infers `any Error` for a
  /// closure literal that throws): `map(with: { (dto) throws(APIError) -> Article in ... })`.
  ///
  /// - Parameter transform: Maps a loaded value; what it throws becomes the load's failure.
  /// - Returns: A query with the mapped value and the same failure type.
  @inlinable
  @_disfavoredOverload
  public func map<NewSuccess>(
    with transform: @escaping @Sendable (Success) throws(Failure) -> NewSuccess
  ) -> FailableMappingQuery<Self, NewSuccess> {
    FailableMappingQuery(upstream: self) { value in
      do throws(Failure) {
        return .success(try transform(value))
      } catch {
        return .failure(error)
      }
    }
  }
}
