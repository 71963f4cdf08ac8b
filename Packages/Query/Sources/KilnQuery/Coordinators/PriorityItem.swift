/// A query to load with a ``ParallelPriorityLoader``, and how much it matters.
///
/// Make one with ``KilnCore/Query/prioritized(_:)``:
///
/// ```swift
/// let items = [
///   MainSection().prioritized(.required),
///   Recommendations().prioritized(.optional),
/// ]
/// ```
@frozen
public struct PriorityItem<Value: Sendable, Failure: Error>: Sendable {
  /// How much the item matters.
  public let priority: ParallelPriority

  /// The query that loads the item.
  public let query: AnyQuery<Value, Failure>

  /// Creates an item.
  ///
  /// - Parameters:
  ///   - priority: How much the item matters.
  ///   - query: The query that loads it.
  @inlinable
  public init<Upstream: Query>(priority: ParallelPriority, _ query: Upstream)
  where Upstream.Success == Value, Upstream.Failure == Failure {
    self.priority = priority
    self.query = AnyQuery(query)
  }
}

extension Query {
  /// This query as an item of a ``ParallelPriorityLoader`` with the given priority.
  ///
  /// - Parameter priority: How much the item matters: `.required`, `.optional` or
  ///   `.custom(_:)`.
  /// - Returns: An item that loads this query.
  @inlinable
  public func prioritized(_ priority: ParallelPriority) -> PriorityItem<Success, Failure> {
    PriorityItem(priority: priority, self)
  }
}
