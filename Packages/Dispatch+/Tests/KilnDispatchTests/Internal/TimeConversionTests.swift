import Dispatch
import Foundation
import Testing

@testable import KilnDispatch

@Suite("Time conversions saturate instead of trapping", .timeLimit(.minutes(1)))
struct TimeConversionTests {
  @Test(
    "Seconds become nanoseconds, clamped to 0...UInt64.max",
    arguments: [
      (0.0, UInt64(0)),
      (-3.0, 0),
      (1.5, 1_500_000_000),
      (0.000_000_001, 1),
      (Double.infinity, .max),
      (1e30, .max),
    ] as [(Double, UInt64)]
  )
  func secondsToNanoseconds(seconds: Double, nanoseconds: UInt64) {
    #expect(Nanoseconds.of(seconds: seconds) == nanoseconds)
  }

  @Test(
    "Durations become nanoseconds, clamped to 0...UInt64.max",
    arguments: [
      (Duration.zero, UInt64(0)),
      (.milliseconds(-5), 0),
      (.seconds(2), 2_000_000_000),
      (.nanoseconds(7), 7),
      (.seconds(Int64.max), .max),
    ] as [(Duration, UInt64)]
  )
  func durationToNanoseconds(duration: Duration, nanoseconds: UInt64) {
    #expect(Nanoseconds.of(duration) == nanoseconds)
  }

  @Test("Intervals too long for an Int nanosecond count fall back to coarser units")
  func clampedIntervals() {
    #expect(DispatchTimeInterval.clamped(nanoseconds: 5) == .nanoseconds(5))
    #expect(DispatchTimeInterval.clamped(nanoseconds: UInt64(Int.max)) == .nanoseconds(Int.max))
    #expect(DispatchTimeInterval.clamped(nanoseconds: .max) == .microseconds(Int(UInt64.max / 1_000)))
  }

  @Test("Deadlines past GCD's range mean never; dates in the past mean now")
  func deadlines() {
    #expect(DispatchTime.after(nanoseconds: .max) == .distantFuture)
    #expect(DispatchTime.after(seconds: .infinity) == .distantFuture)
    #expect(DispatchTime.after(.seconds(1)) > .now())
    #expect(DispatchWallTime.at(.distantFuture) == .distantFuture)
    #expect(DispatchWallTime.at(.distantPast) <= .now())
    #expect(DispatchWallTime.at(Date(timeIntervalSinceNow: 60)) > .now())
  }

  @Test("A NaN delay stops the program with a clear message")
  func nanDelay() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      DispatchQueue.global().async(after: .nan) {}
    }
    let standardError = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(standardError.contains("cannot be NaN"))
  }
}
