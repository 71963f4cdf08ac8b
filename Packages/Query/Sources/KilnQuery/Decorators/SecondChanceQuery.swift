/// A query that loads a secondary query when its primary fails, and reports the
/// **primary's** failure when both fail.
///
/// Create one with ``KilnCore/Query/secondChance(_:)``.
@frozen
public struct SecondChanceQuery<Primary: Query, Secondary: Query>: Query
where Secondary.Success == Primary.Success {
  public typealias Success = Primary.Success
  public typealias Failure = Primary.Failure

  /// The query tried first, whose failure is reported.
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
      do throws(Secondary.Failure) {
        return try await secondary.load()
      } catch _ {
        throw error
      }
    }
  }
}

extension Query {
  /// Loads `secondary` when this query fails; when both fail, **this query's** failure is
  /// reported.
  ///
  /// Use it when the primary is the source that matters and the secondary a best effort —
  /// a live request with a stale copy to show when offline:
  ///
  /// ```swift
  /// let feed = network.secondChance(offlineCopy)
  /// // both fail → the network's error (offline, 503…), not "no offline copy"
  /// ```
  ///
  /// The secondary never runs when this query succeeds, and its failure type does not matter.
  /// Compare ``fallback(_:)``, which reports the secondary's failure.
  ///
  /// - Parameter secondary: The query to load when this one fails.
  /// - Returns: A query with this query's failure type.
  @inlinable
  public func secondChance<Secondary: Query>(_ secondary: Secondary) -> SecondChanceQuery<Self, Secondary>
  where Secondary.Success == Success {
    SecondChanceQuery(primary: self, secondary: secondary)
  }
}
