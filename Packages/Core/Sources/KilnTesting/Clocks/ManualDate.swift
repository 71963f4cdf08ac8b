public import Foundation
import KilnCore
import _KilnSynchronization

/// A wall-clock `now` that only moves when a test moves it.
///
/// Pass ``provider`` wherever Kiln takes `now: @Sendable () -> Date`, then move time
/// explicitly:
///
/// ```swift
/// let now = ManualDate()
/// let cache = MemoryCache<String, Int>(entryLifetime: .seconds(60), now: now.provider)
/// cache["a"] = 1
/// now.advance(by: .seconds(61))
/// #expect(cache["a"] == nil)
/// ```
///
/// When a test also needs sleeps, use ``ManualClock`` and its ``ManualClock/dateProvider``
/// instead: one clock then drives both.
public final class ManualDate: Sendable {
  private let current: KilnMutex<Date>

  /// Creates a provider at `date`.
  ///
  /// - Parameter date: The starting date; the default is ``ManualClock/defaultStartDate``.
  public init(_ date: Date = ManualClock.defaultStartDate) {
    current = KilnMutex(date)
  }

  /// The current date.
  public var now: Date {
    current.withLock { $0 }
  }

  /// The current date; lets the provider be called like a function: `now()`.
  public func callAsFunction() -> Date {
    now
  }

  /// A closure reading ``now``.
  public var provider: @Sendable () -> Date {
    { [self] in self.now }
  }

  /// Moves the date by `duration` (forward, or back when negative: wall clocks can jump).
  public func advance(by duration: Duration) {
    current.withLock { $0 = $0.addingTimeInterval(duration.timeInterval) }
  }

  /// Sets the date.
  public func set(to date: Date) {
    current.withLock { $0 = date }
  }
}
