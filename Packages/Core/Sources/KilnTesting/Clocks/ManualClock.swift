public import Foundation
public import KilnCore
import _KilnSynchronization

/// A `Clock` whose time moves only when a test advances it.
///
/// Inject it wherever Kiln takes `any Clock<Duration>` — expiry, retry backoff, timeouts,
/// debouncing — and drive time from the test instead of sleeping:
///
/// ```swift
/// let clock = ManualClock()
/// let query = network.timeout(.seconds(5), clock: clock)
/// let load = Task { await query.result() }
/// await clock.waitForSleepers(count: 1)   // the timeout is armed
/// clock.advance(by: .seconds(5))          // …and fires, without waiting five seconds
/// ```
///
/// Sleepers wake only when ``advance(by:)`` or ``advance(to:)`` moves ``now`` to or past
/// their deadline, earliest deadline first. Cancelling a sleeping task ends its sleep at
/// once with `CancellationError`.
///
/// The clock also keeps a wall-clock ``date`` that moves in step with ``now``, so one
/// clock can drive both `Duration`-based sleeps and `Date`-based stamps: pass
/// ``dateProvider`` where Kiln takes a `now: @Sendable () -> Date`.
public final class ManualClock: DatedClock, Sendable {
  /// An instant of a ``ManualClock``: the time elapsed since the clock was created.
  public struct Instant: InstantProtocol, Hashable, Sendable, CustomStringConvertible {
    /// Time elapsed since the clock's start.
    public var offset: Duration

    /// Creates the instant `offset` after the clock's start.
    public init(offset: Duration) {
      self.offset = offset
    }

    public func advanced(by duration: Duration) -> Instant {
      Instant(offset: offset + duration)
    }

    public func duration(to other: Instant) -> Duration {
      other.offset - offset
    }

    public static func < (lhs: Instant, rhs: Instant) -> Bool {
      lhs.offset < rhs.offset
    }

    public var description: String {
      "ManualClock.Instant(\(offset))"
    }
  }

  private struct State {
    var now = Instant(offset: .zero)
    var sleepers = WaiterTable<Instant>()
  }

  private let state = KilnMutex(State())
  /// Counts the tasks sleeping now. Only changed under `state`'s lock, so a test woken by
  /// `waitForSleepers` always finds the sleepers registered.
  private let sleepers = AsyncCounter()
  /// Counts the sleeps that ended by cancellation, parked or not.
  private let cancelledSleeps = AsyncCounter()

  /// The wall-clock date at ``now`` == zero.
  public let startDate: Date

  /// Creates a clock at instant zero.
  ///
  /// - Parameter startDate: The wall-clock ``date`` at instant zero. The default is a fixed
  ///   date (2026-01-01 00:00:00 UTC) so tests are reproducible.
  public init(startDate: Date = ManualClock.defaultStartDate) {
    self.startDate = startDate
  }

  /// 2026-01-01 00:00:00 UTC, the default ``startDate``.
  public static let defaultStartDate = Date(timeIntervalSince1970: 1_767_225_600)

  /// The current instant.
  public var now: Instant {
    state.withLock { $0.now }
  }

  /// The wall-clock date at the current instant: ``startDate`` plus the elapsed time.
  public var date: Date {
    startDate.addingTimeInterval(now.offset.timeInterval)
  }

  /// A `now` provider that reads ``date``, for APIs that take `@Sendable () -> Date`.
  public var dateProvider: @Sendable () -> Date {
    { [self] in self.date }
  }

  /// Zero: a manual clock is exact.
  public var minimumResolution: Duration {
    .zero
  }

  /// The number of tasks currently sleeping on this clock.
  public var sleeperCount: Int {
    sleepers.value
  }

  /// Suspends until ``now`` reaches `deadline` through ``advance(by:)`` or ``advance(to:)``.
  ///
  /// A deadline at or before ``now`` returns at once.
  ///
  /// - Throws: `CancellationError` when the task is cancelled before or while sleeping.
  public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
    try await suspend(
      reserve: { state.withLock { $0.sleepers.reserve() } },
      park: { id, continuation in
        state.withLock { state in
          let outcome = state.sleepers.park(id, until: deadline, isSatisfied: deadline <= state.now, continuation)
          if outcome == .parked { sleepers.increment() }
          if outcome == .cancelled { cancelledSleeps.increment() }
          return outcome
        }
      },
      cancel: { [self] id in
        state.withLock { state in
          let continuation = state.sleepers.cancel(id)
          if continuation != nil {
            sleepers.decrement()
            cancelledSleeps.increment()
          }
          return continuation
        }
      }
    )
  }

  /// Moves time forward by `duration` and wakes every sleeper whose deadline is reached.
  ///
  /// - Parameter duration: How far to move; must not be negative.
  public func advance(by duration: Duration) {
    precondition(duration >= .zero, "a manual clock cannot go back (advance by \(duration))")
    wake { $0.now = $0.now.advanced(by: duration) }
  }

  /// Moves time forward to `instant` and wakes every sleeper whose deadline is reached.
  ///
  /// An instant before ``now`` leaves the clock where it is.
  ///
  /// - Parameter instant: The instant to move to.
  public func advance(to instant: Instant) {
    wake { $0.now = max($0.now, instant) }
  }

  /// Suspends until at least `count` tasks are sleeping on this clock.
  ///
  /// Call it before ``advance(by:)`` when the code under test must have armed its timer
  /// first. Returns at once if the task is cancelled.
  ///
  /// - Parameter count: The number of sleepers to wait for.
  public func waitForSleepers(count: Int = 1) async {
    await sleepers.wait(untilAtLeast: count)
  }

  /// Suspends until at least `count` sleeps on this clock have ended by cancellation.
  ///
  /// For checking that the code under test disarms its timer. A sleep counts once it has
  /// begun registering: a task already cancelled when it calls ``sleep(until:tolerance:)``
  /// throws without counting. Returns at once if the waiting task is cancelled.
  ///
  /// - Parameter count: The number of cancelled sleeps to wait for.
  public func waitForCancelledSleeps(_ count: Int = 1) async {
    await cancelledSleeps.wait(untilAtLeast: count)
  }

  private func wake(_ move: (inout State) -> Void) {
    let due = state.withLock { state in
      move(&state)
      let now = state.now
      let due = state.sleepers.removeWaiters { deadline in deadline <= now }
      sleepers.add(-due.count)
      // Earliest deadline first; the table already orders equal deadlines by arrival.
      return due.enumerated().sorted { ($0.element.0, $0.offset) < ($1.element.0, $1.offset) }.map(\.element.1)
    }
    for continuation in due { continuation.resume() }
  }
}
