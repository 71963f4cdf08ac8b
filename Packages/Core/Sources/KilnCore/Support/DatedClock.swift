public import Foundation

/// A clock that also tells the wall-clock date, so that what sleeps on it (retry waits,
/// timeouts) and what dates things (`Retry-After`, expiry stamps) cannot drift apart.
///
/// `ContinuousClock` conforms with `Date()`; KilnTesting's `ManualClock` conforms with its
/// start date plus the time advanced, so a test that advances it moves both at once.
/// ``dateProvider(for:)`` turns any clock into a date source consistent with it.
public protocol DatedClock: Clock where Duration == Swift.Duration {
  /// The wall-clock date now.
  var date: Date { get }
}

extension ContinuousClock: DatedClock {
  /// `Date()`.
  public var date: Date { Date() }
}

/// The current date as `clock` sees it: the clock's own ``DatedClock/date`` when it has one,
/// otherwise the date when this was called plus the time that passes on `clock`.
///
/// - Parameter clock: The clock of the waits.
/// - Returns: A date source that moves with `clock`.
public func dateProvider(for clock: any Clock<Duration>) -> @Sendable () -> Date {
  if let dated = clock as? any DatedClock {
    return { dated.date }
  }
  return anchoredDateProvider(for: clock)
}

private func anchoredDateProvider<C: Clock<Duration>>(for clock: C) -> @Sendable () -> Date {
  let start = clock.now
  let startDate = Date()
  return { startDate.addingTimeInterval(start.duration(to: clock.now).timeInterval) }
}
