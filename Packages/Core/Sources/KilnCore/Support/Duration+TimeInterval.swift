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

extension Duration {
  /// A duration of `minutes` minutes: `.maxAge(.minutes(5))`.
  @inlinable
  public static func minutes<T: BinaryInteger>(_ minutes: T) -> Duration {
    .seconds(minutes * 60)
  }

  /// A duration of `minutes` minutes, which may be fractional: `.minutes(1.5)`.
  @inlinable
  public static func minutes(_ minutes: Double) -> Duration {
    .seconds(minutes * 60)
  }

  /// A duration of `hours` hours: `entryLifetime: .hours(1)`.
  @inlinable
  public static func hours<T: BinaryInteger>(_ hours: T) -> Duration {
    .seconds(hours * 3_600)
  }

  /// A duration of `hours` hours, which may be fractional: `.hours(0.5)`.
  @inlinable
  public static func hours(_ hours: Double) -> Duration {
    .seconds(hours * 3_600)
  }
}
