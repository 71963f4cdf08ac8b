import Foundation
import KilnCore
import KilnTesting
import Testing

@Suite("ValidationPolicy")
struct ValidationPolicyTests {
  /// The smallest representable step of a `Date` around `date`.
  static func tick(after date: Date) -> Date {
    Date(timeIntervalSinceReferenceDate: date.timeIntervalSinceReferenceDate.nextUp)
  }

  static func tick(before date: Date) -> Date {
    Date(timeIntervalSinceReferenceDate: date.timeIntervalSinceReferenceDate.nextDown)
  }

  @Test(
    "maxAge is valid exactly at max age and one tick before, invalid one tick after",
    arguments: [Duration.zero, .milliseconds(1), .seconds(1), .seconds(300), .seconds(86_400 * 365)]
  )
  func maxAgeBoundary(age: Duration) {
    let clock = ManualClock()
    let timestamp = clock.date
    let policy: MaxAgeValidationPolicy = .maxAge(age)

    clock.advance(by: age)
    let atMaxAge = clock.date
    #expect(atMaxAge == timestamp.addingTimeInterval(age.timeInterval))
    #expect(policy.isValid(timestamp: timestamp, now: Self.tick(before: atMaxAge)))
    #expect(policy.isValid(timestamp: timestamp, now: atMaxAge))
    #expect(!policy.isValid(timestamp: timestamp, now: Self.tick(after: atMaxAge)))
  }

  @Test("maxAge over whole milliseconds of a manual clock")
  func maxAgeWithClockSteps() {
    let clock = ManualClock()
    let timestamp = clock.date
    let policy: MaxAgeValidationPolicy = .maxAge(.seconds(5))
    clock.advance(by: .milliseconds(4_999))
    #expect(policy.isValid(timestamp: timestamp, now: clock.date))
    clock.advance(by: .milliseconds(1))
    #expect(policy.isValid(timestamp: timestamp, now: clock.date))
    clock.advance(by: .milliseconds(1))
    #expect(!policy.isValid(timestamp: timestamp, now: clock.date))
  }

  @Test("maxAge treats a missing timestamp as invalid, and a value from the future as valid")
  func maxAgeEdges() {
    let now = ManualClock.defaultStartDate
    let policy: MaxAgeValidationPolicy = .maxAge(.seconds(1))
    #expect(!policy.isValid(timestamp: nil, now: now))
    #expect(policy.isValid(timestamp: now.addingTimeInterval(3_600), now: now))
    #expect(policy.maxAge == .seconds(1))
  }

  @Test("alwaysValid is valid for any timestamp, even none")
  func alwaysValid() {
    let now = ManualClock.defaultStartDate
    let policy: AlwaysValidPolicy = .alwaysValid
    #expect(policy.isValid(timestamp: nil, now: now))
    #expect(policy.isValid(timestamp: .distantPast, now: now))
    #expect(policy.isValid(timestamp: now, now: now))
  }

  @Test("neverValid is invalid for any timestamp, even now")
  func neverValid() {
    let now = ManualClock.defaultStartDate
    let policy: NeverValidPolicy = .neverValid
    #expect(!policy.isValid(timestamp: nil, now: now))
    #expect(!policy.isValid(timestamp: now, now: now))
    #expect(!policy.isValid(timestamp: .distantFuture, now: now))
  }

  @Test("custom receives the timestamp and now and decides")
  func custom() {
    let now = ManualClock.defaultStartDate
    let seen = Recorder<[Date?]>()
    let policy: CustomValidationPolicy = .custom { timestamp, now in
      seen.append([timestamp, now])
      return timestamp != nil
    }
    #expect(policy.isValid(timestamp: now.addingTimeInterval(-1), now: now))
    #expect(!policy.isValid(timestamp: nil, now: now))
    #expect(seen.values == [[now.addingTimeInterval(-1), now], [nil, now]])
  }

  @Test("policies work as existentials")
  func existential() {
    let now = ManualClock.defaultStartDate
    let policies: [any ValidationPolicy] = [.maxAge(.seconds(1)) as MaxAgeValidationPolicy, AlwaysValidPolicy()]
    #expect(policies.map { $0.isValid(timestamp: now.addingTimeInterval(-2), now: now) } == [false, true])
  }
}

@Suite("Duration and TimeInterval")
struct DurationTimeIntervalTests {
  @Test(
    "a duration converts to seconds",
    arguments: [
      (Duration.zero, 0.0), (.seconds(90), 90.0), (.milliseconds(1_500), 1.5), (.nanoseconds(1), 1e-9),
      (.seconds(-2), -2.0),
    ]
  )
  func toTimeInterval(duration: Duration, seconds: Double) {
    #expect(abs(duration.timeInterval - seconds) < 1e-15)
  }

  @Test("minutes and hours, whole and fractional")
  func minutesAndHours() {
    #expect(Duration.minutes(5) == .seconds(300))
    #expect(Duration.minutes(1.5) == .seconds(90))
    #expect(Duration.hours(2) == .seconds(7_200))
    #expect(Duration.hours(0.25) == .seconds(900))
    #expect(MaxAgeValidationPolicy.maxAge(.minutes(5)).maxAge == .seconds(300))
  }

  @Test("seconds convert to a duration")
  func fromTimeInterval() {
    #expect(Duration(timeInterval: 1.5) == .milliseconds(1_500))
    #expect(Duration(timeInterval: 0) == .zero)
    #expect(Duration(timeInterval: -0.25) == .milliseconds(-250))
  }
}
