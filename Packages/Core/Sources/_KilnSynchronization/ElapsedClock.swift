/// A clock reduced to what deadlines need: the time elapsed since it was made, and a sleep
/// until an elapsed time. Opened once from any `Clock<Duration>`, so that deadlines need no
/// existential instant and scheduling runs no generic code (unspecialised generic code looks
/// up type metadata on every call). Used by ``DeadlineQueue`` and KilnRepository's release
/// deadlines.
package struct ElapsedClock: Sendable {
  /// The time elapsed on the clock since this value was made.
  package let elapsed: @Sendable () -> Duration
  /// Sleeps on the clock until ``elapsed`` reaches the given offset.
  package let sleepUntil: @Sendable (Duration) async throws -> Void

  /// Measures from now on `clock`.
  package init(_ clock: any Clock<Duration>) {
    self = Self.measure(on: clock)
  }

  private init(
    elapsed: @escaping @Sendable () -> Duration, sleepUntil: @escaping @Sendable (Duration) async throws -> Void
  ) {
    self.elapsed = elapsed
    self.sleepUntil = sleepUntil
  }

  private static func measure<C: Clock<Duration>>(on clock: C) -> ElapsedClock {
    let origin = clock.now
    return ElapsedClock(
      elapsed: { origin.duration(to: clock.now) },
      sleepUntil: { offset in try await clock.sleep(until: origin.advanced(by: offset), tolerance: nil) })
  }
}
