public import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Wall clocks for the `now:` parameters of Kiln's stores.
///
/// Every store takes `now: @Sendable () -> Date` so that tests can inject a
/// `ManualDate`. ``MemoryCache`` reads its clock on every write, so its default is the
/// cheaper ``coarse`` clock; the other stores default to `Date.init`.
public enum StoreClock {
  /// `Date()`: the precise wall clock.
  public static let precise: @Sendable () -> Date = { Date() }

  /// The kernel's coarse real-time clock on Linux (`CLOCK_REALTIME_COARSE`: updated every
  /// scheduler tick, 1–4 ms, and several times cheaper to read than `Date()`); `Date()`
  /// elsewhere.
  ///
  /// Precise enough for cache stamps and lifetimes measured in seconds or more.
  public static let coarse: @Sendable () -> Date = {
    Date(timeIntervalSinceReferenceDate: coarseInstant())
  }

  /// ``coarse``'s reading as seconds since the reference date, read inline: what
  /// ``MemoryCache`` stamps and judges entries with when no clock is injected, without a
  /// call through a closure or a `Date` (a tenth of a hit's cost, in perf).
  @inlinable
  static func coarseInstant() -> Double {
    #if os(Linux)
      var spec = timespec()
      clock_gettime(CLOCK_REALTIME_COARSE, &spec)
      return Double(spec.tv_sec) - Date.timeIntervalBetween1970AndReferenceDate + Double(spec.tv_nsec) * 1e-9
    #else
      return Date().timeIntervalSinceReferenceDate
    #endif
  }
}
