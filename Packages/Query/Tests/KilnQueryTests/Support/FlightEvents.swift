import KilnTesting
import Testing

@testable import KilnQuery

/// Counts the events of the flights a test joins, starts and waits for, so the test waits for
/// an event instead of polling a registry.
///
/// A suite or test with the ``Trait/observingFlights`` trait gets its own instance,
/// ``current``: every flight its body and the tasks it creates touch report here (through the
/// debug-only ``FlightProbe``).
///
/// ```swift
/// @Suite(.observingFlights) struct SerialQueryTests {
///   @Test func shares() async throws {
///     let a = Task { try await query.load() }
///     let b = Task { try await query.load() }
///     await FlightEvents.current.waitForJoins(2)   // both callers are in the flight
///   }
/// }
/// ```
final class FlightEvents: Sendable {
  @TaskLocal private static var installed: FlightEvents?

  /// The events of the running test's flights.
  static var current: FlightEvents {
    guard let installed else { preconditionFailure("the test lacks the .observingFlights trait") }
    return installed
  }

  private let joined = AsyncCounter()
  private let started = AsyncCounter()
  private let waiting = AsyncCounter()
  private let left = AsyncCounter()
  private let ended = AsyncCounter()

  /// Suspends until callers joined flights `count` times in all.
  func waitForJoins(_ count: Int) async {
    await joined.wait(untilAtLeast: count)
  }

  /// Suspends until `count` flights have started in all.
  func waitForStarts(_ count: Int) async {
    await started.wait(untilAtLeast: count)
  }

  /// Suspends until callers waited for an outcome `count` times in all (each with its
  /// priority applied to the load).
  func waitForWaiters(_ count: Int) async {
    await waiting.wait(untilAtLeast: count)
  }

  /// Suspends until waiting callers were cancelled `count` times in all.
  func waitForLeaves(_ count: Int) async {
    await left.wait(untilAtLeast: count)
  }

  /// Suspends until `count` flights have ended (and left their registry) in all.
  func waitForEnds(_ count: Int) async {
    await ended.wait(untilAtLeast: count)
  }

  /// Suspends until every flight started so far has ended: call it once nothing starts any
  /// more.
  func waitUntilAllEnded() async {
    await ended.wait(untilAtLeast: started.value)
  }

  fileprivate func record(_ event: FlightEvent) {
    switch event {
    case .joined: joined.increment()
    case .started: started.increment()
    case .waiting: waiting.increment()
    case .left: left.increment()
    case .ended: ended.increment()
    }
  }

  /// Runs `body` with a fresh ``current`` that observes its flights.
  fileprivate static func observe(_ body: () async throws -> Void) async throws {
    let events = FlightEvents()
    try await $installed.withValue(events) {
      try await FlightProbe.$observer.withValue({ events.record($0) }) {
        try await body()
      }
    }
  }
}

/// Gives each test a fresh ``FlightEvents/current``.
struct ObservingFlights: TestTrait, SuiteTrait, TestScoping {
  var isRecursive: Bool { true }

  func provideScope(
    for test: Test,
    testCase: Test.Case?,
    performing function: @Sendable () async throws -> Void
  ) async throws {
    guard testCase != nil else { return try await function() }
    try await FlightEvents.observe(function)
  }
}

extension Trait where Self == ObservingFlights {
  /// Observes the flights of each test: ``FlightEvents/current``.
  static var observingFlights: Self { ObservingFlights() }
}
