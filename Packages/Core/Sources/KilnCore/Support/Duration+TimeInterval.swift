public import Foundation

extension Duration {
  /// The duration in seconds, as Foundation's `TimeInterval`.
  ///
  /// Use it to move between an injected `Clock<Duration>` and wall-clock `Date`s:
  /// `storedAt.addingTimeInterval(lifetime.timeInterval)`.
  @inlinable
  public var timeInterval: TimeInterval {
    let (seconds, attoseconds) = components
    return TimeInterval(seconds) + TimeInterval(attoseconds) * 1e-18
  }

  /// A duration of `timeInterval` seconds.
  ///
  /// - Parameter timeInterval: A finite number of seconds.
  @inlinable
  public init(timeInterval: TimeInterval) {
    precondition(timeInterval.isFinite, "timeInterval must be finite, got \(timeInterval)")
    self = .seconds(timeInterval)
  }
}
