/// A query that loads a secondary query when its primary fails, and reports the
/// **secondary's** failure when both fail.
///
/// Create one with ``KilnCore/Query/fallback(_:)``.
@frozen
public struct FallbackQuery<Primary: Query, Secondary: Query>: Query where Secondary.Success == Primary.Success {
  public typealias Success = Primary.Success
  public typealias Failure = Secondary.Failure

  /// The query tried first.
  public let primary: Primary

  /// The query loaded when ``primary`` fails.
  public let secondary: Secondary

  @inlinable
  init(primary: Primary, secondary: Secondary) {
    self.primary = primary
    self.secondary = secondary
  }

  @inlinable @inline(__always)
  public func load() async throws(Failure) -> Success {
    do throws(Primary.Failure) {
      return try await primary.load()
    } catch {
      return try await secondary.load()
    }
  }
}

extension Query {
  /// Loads `secondary` when this query fails; when both fail, the **secondary's** failure is
  /// reported.
  ///
  /// Use it when the secondary is the authoritative source — the classic cache-then-network
  /// pipeline, where the network error matters and "the cache was empty" does not:
  ///
  /// ```swift
  /// let articles = cache
  ///   .expiring(validationPolicy: .maxAge(.seconds(300)))
  ///   .fallback(network.map(with: Article.init).store(into: cache))
  /// ```
  ///
  /// The secondary never runs when this query succeeds. Compare ``secondChance(_:)``, which
  /// keeps the primary's failure.
  ///
  /// - Parameter secondary: The query to load when this one fails.
  /// - Returns: A query with the secondary's failure type.
  @inlinable
  public func fallback<Secondary: Query>(_ secondary: Secondary) -> FallbackQuery<Self, Secondary>
  where Secondary.Success == Success {
    FallbackQuery(primary: self, secondary: secondary)
  }
}
