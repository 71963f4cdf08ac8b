import Dispatch
import Foundation

// Conversions from seconds, `Duration` and `Date` to GCD times. They saturate instead of
// trapping: a delay too large to represent means "never", a negative one means "now".

enum Nanoseconds {
  /// `seconds` in whole nanoseconds, clamped to `0...UInt64.max`.
  static func of(seconds: Double) -> UInt64 {
    precondition(!seconds.isNaN, "A time interval cannot be NaN")
    guard seconds > 0 else { return 0 }
    let nanoseconds = seconds * 1e9
    guard nanoseconds < Double(UInt64.max) else { return .max }
    return UInt64(nanoseconds)
  }

  /// `duration` in whole nanoseconds, clamped to `0...UInt64.max`.
  static func of(_ duration: Duration) -> UInt64 {
    guard duration > .zero else { return 0 }
    let (seconds, attoseconds) = duration.components
    let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
    guard !overflow else { return .max }
    let (total, carry) = whole.addingReportingOverflow(UInt64(attoseconds / 1_000_000_000))
    return carry ? .max : total
  }
}

extension DispatchTime {
  /// The uptime deadline `nanoseconds` from now; `.distantFuture` past its range.
  static func after(nanoseconds: UInt64) -> DispatchTime {
    let now = DispatchTime.now()
    let (deadline, overflow) = now.uptimeNanoseconds.addingReportingOverflow(nanoseconds)
    guard !overflow, deadline < DispatchTime.distantFuture.uptimeNanoseconds else { return .distantFuture }
    return DispatchTime(uptimeNanoseconds: deadline)
  }

  /// The uptime deadline `duration` from now.
  static func after(_ duration: Duration) -> DispatchTime {
    after(nanoseconds: Nanoseconds.of(duration))
  }

  /// The uptime deadline `seconds` from now.
  static func after(seconds: Double) -> DispatchTime {
    after(nanoseconds: Nanoseconds.of(seconds: seconds))
  }
}

extension DispatchWallTime {
  /// The wall-clock deadline of `date`: now when `date` is in the past, `.distantFuture`
  /// past GCD's range.
  static func at(_ date: Date) -> DispatchWallTime {
    let interval = date.timeIntervalSinceNow
    guard interval > 0 else { return .now() }
    // Nearly three centuries is "never" for a timer, and keeps GCD's signed 64-bit
    // nanosecond arithmetic in range.
    guard interval < 9e9 else { return .distantFuture }
    return .now() + DispatchTimeInterval.clamped(nanoseconds: Nanoseconds.of(seconds: interval))
  }
}

extension DispatchTimeInterval {
  /// `nanoseconds` in the finest unit whose count fits an `Int` (which is 32 bits on some
  /// watches), so long intervals lose precision instead of trapping.
  static func clamped(nanoseconds: UInt64) -> DispatchTimeInterval {
    if nanoseconds <= UInt64(Int.max) { return .nanoseconds(Int(nanoseconds)) }
    if nanoseconds / 1_000 <= UInt64(Int.max) { return .microseconds(Int(nanoseconds / 1_000)) }
    if nanoseconds / 1_000_000 <= UInt64(Int.max) { return .milliseconds(Int(nanoseconds / 1_000_000)) }
    return .seconds(Int(clamping: nanoseconds / 1_000_000_000))
  }
}
