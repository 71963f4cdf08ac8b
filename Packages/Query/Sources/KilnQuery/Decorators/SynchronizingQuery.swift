/// A query that loads two queries at the same time and delivers both outcomes together
/// (Bricks' `Synchronizer`).
///
/// Create one with ``KilnCore/Query/synchronize(with:)``.
@frozen
public struct SynchronizingQuery<First: Query, Second: Query>: Query {
  public typealias Success = (Result<First.Success, First.Failure>, Result<Second.Success, Second.Failure>)
  public typealias Failure = Never

  /// The query loaded in the caller's task.
  public let first: First

  /// The query loaded in a child task, at the same time.
  public let second: Second

  @inlinable
  init(first: First, second: Second) {
    self.first = first
    self.second = second
  }

  @inlinable
  public func load() async -> Success {
    async let secondResult = second.result()
    let firstResult = await first.result()
    return (firstResult, await secondResult)
  }
}

extension Query {
  /// Loads this query and `other` at the same time and delivers both outcomes at once.
  ///
  /// ```swift
  /// let (user, settings) = await userQuery.synchronize(with: settingsQuery).load()
  /// guard case .success(let user) = user, case .success(let settings) = settings else { return }
  /// configure(user, settings)
  /// ```
  ///
  /// The load never fails: each outcome is in its own `Result`, so one failure does not hide
  /// the other value. Cancelling the caller cancels both loads.
  ///
  /// - Parameter other: The query to load beside this one.
  /// - Returns: A query whose value is the pair of outcomes.
  @inlinable
  public func synchronize<Other: Query>(with other: Other) -> SynchronizingQuery<Self, Other> {
    SynchronizingQuery(first: self, second: other)
  }
}
