import Foundation
import KilnTesting
import Testing

@Suite("ManualClock", .timeLimit(.minutes(1)))
struct ManualClockTests {
  @Test("a sleeper wakes only when the clock is advanced to its deadline")
  func wakesOnlyOnAdvance() async throws {
    let clock = ManualClock()
    let woke = Recorder<ManualClock.Instant>()
    let sleeper = Task {
      try await clock.sleep(for: .seconds(10))
      woke.append(clock.now)
    }
    await clock.waitForSleepers(count: 1)
    #expect(clock.sleeperCount == 1)

    clock.advance(by: .seconds(9))
    // Still asleep: the deadline is not reached, so nothing is recorded and the sleeper
    // remains registered.
    #expect(clock.sleeperCount == 1)
    #expect(woke.values.isEmpty)

    clock.advance(by: .seconds(1))
    try await sleeper.value
    #expect(woke.values == [ManualClock.Instant(offset: .seconds(10))])
    #expect(clock.sleeperCount == 0)
  }

  @Test("advance(to:) wakes sleepers whose deadline is reached, and never moves back")
  func advanceTo() async throws {
    let clock = ManualClock()
    let early = Task { try await clock.sleep(until: .init(offset: .seconds(2))) }
    let late = Task { try await clock.sleep(until: .init(offset: .seconds(5))) }
    await clock.waitForSleepers(count: 2)

    clock.advance(to: .init(offset: .seconds(3)))
    try await early.value
    #expect(clock.sleeperCount == 1)

    clock.advance(to: .init(offset: .seconds(1)))
    #expect(clock.now == .init(offset: .seconds(3)))

    clock.advance(to: .init(offset: .seconds(5)))
    try await late.value
    #expect(clock.sleeperCount == 0)
  }

  @Test("one advance past several deadlines wakes them all")
  func wakesMany() async throws {
    let clock = ManualClock()
    let sleepers = (1...100).map { n in Task { try await clock.sleep(for: .milliseconds(n)) } }
    await clock.waitForSleepers(count: 100)
    clock.advance(by: .seconds(1))
    for sleeper in sleepers { try await sleeper.value }
    #expect(clock.sleeperCount == 0)
  }

  @Test("a deadline at or before now returns at once")
  func pastDeadline() async throws {
    let clock = ManualClock()
    clock.advance(by: .seconds(5))
    try await clock.sleep(until: .init(offset: .seconds(5)))
    try await clock.sleep(until: .init(offset: .seconds(1)))
    try await clock.sleep(for: .zero)
    #expect(clock.sleeperCount == 0)
  }

  @Test("cancelling a sleeper ends its sleep with CancellationError and unregisters it")
  func cancellation() async {
    let clock = ManualClock()
    let sleeper = Task { try await clock.sleep(for: .seconds(60)) }
    await clock.waitForSleepers(count: 1)
    sleeper.cancel()
    await #expect(throws: CancellationError.self) { try await sleeper.value }
    #expect(clock.sleeperCount == 0)
    #expect(clock.now == .init(offset: .zero))
  }

  @Test("waitForCancelledSleeps(_:) returns once a sleeper was cancelled")
  func waitForCancelledSleeps() async throws {
    let clock = ManualClock()
    let woken = Task { try await clock.sleep(for: .seconds(1)) }
    let cancelled = Task { try await clock.sleep(for: .seconds(60)) }
    await clock.waitForSleepers(count: 2)
    clock.advance(by: .seconds(1))
    try await woken.value
    #expect(clock.sleeperCount == 1)

    cancelled.cancel()
    await clock.waitForCancelledSleeps(1)
    #expect(clock.sleeperCount == 0)
    await #expect(throws: CancellationError.self) { try await cancelled.value }
  }

  @Test("a task cancelled before it sleeps throws at once")
  func cancelledBeforeSleeping() async {
    let clock = ManualClock()
    let sleeper = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      try await clock.sleep(for: .seconds(1))
    }
    await #expect(throws: CancellationError.self) { try await sleeper.value }
    #expect(clock.sleeperCount == 0)
  }

  @Test("cancellation races with registration never hang or leak a sleeper")
  func cancellationRace() async {
    let clock = ManualClock()
    for _ in 0..<500 {
      let sleeper = Task { try await clock.sleep(for: .seconds(1)) }
      sleeper.cancel()
      _ = await sleeper.result
    }
    #expect(clock.sleeperCount == 0)
  }

  @Test("the wall-clock date moves with the clock")
  func wallClock() async {
    let start = Date(timeIntervalSince1970: 1_000_000)
    let clock = ManualClock(startDate: start)
    let now = clock.dateProvider
    #expect(clock.date == start)
    #expect(now() == start)
    clock.advance(by: .milliseconds(1_500))
    #expect(clock.date == start.addingTimeInterval(1.5))
    #expect(now() == start.addingTimeInterval(1.5))
  }

  @Test("the default start date is fixed, so tests are reproducible")
  func defaultStart() {
    #expect(ManualClock().date == ManualClock.defaultStartDate)
    #expect(ManualClock.defaultStartDate == ISO8601DateFormatter().date(from: "2026-01-01T00:00:00Z"))
  }

  @Test("instants order and measure by their offset")
  func instants() {
    let a = ManualClock.Instant(offset: .seconds(1))
    let b = a.advanced(by: .seconds(2))
    #expect(a < b)
    #expect(a.duration(to: b) == .seconds(2))
    #expect(ManualClock().minimumResolution == .zero)
    #expect(b.description == "ManualClock.Instant(3.0 seconds)")
  }

  @Test("works as an injected any Clock<Duration>")
  func existential() async throws {
    let manual = ManualClock()
    let clock: any Clock<Duration> = manual
    let sleeper = Task { try await clock.sleep(for: .seconds(3)) }
    await manual.waitForSleepers(count: 1)
    manual.advance(by: .seconds(3))
    try await sleeper.value
  }
}

@Suite("ManualDate")
struct ManualDateTests {
  @Test("moves only when told, both ways")
  func moves() {
    let now = ManualDate(Date(timeIntervalSince1970: 0))
    #expect(now() == Date(timeIntervalSince1970: 0))
    now.advance(by: .seconds(90))
    #expect(now.now == Date(timeIntervalSince1970: 90))
    now.advance(by: .seconds(-30))
    #expect(now.provider() == Date(timeIntervalSince1970: 60))
    now.set(to: .distantFuture)
    #expect(now() == .distantFuture)
  }
}
