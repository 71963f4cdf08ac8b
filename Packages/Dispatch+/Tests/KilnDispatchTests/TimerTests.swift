import Dispatch
import Foundation
import KilnDispatch
import KilnTesting
import Testing

/// Timer tests measure real time, as the behaviour under test is real wall-clock timing:
/// lower bounds are exact ("never early"), upper bounds are only the generous wait limits.
@Suite("DispatchQueue timers: async(after:), async(at:), async(every:)", .timeLimit(.minutes(1)))
struct TimerTests {
  // MARK: - async(after:)

  @Test("async(after: seconds) runs the block on the queue, never early")
  func afterSeconds() async {
    let queue = QueueProbe.serialQueue("timers")
    let fired = Recorder<(Double, Place)>()
    let start = DispatchTime.now()
    queue.async(after: 0.2) { fired.append((seconds(since: start), QueueProbe.here)) }
    let (elapsed, place) = await fired.first() ?? (0, .unnamed)
    #expect(elapsed >= 0.2)
    #expect(place == .queue("timers"))
  }

  @Test("async(after: Duration) runs the block on the queue, never early")
  func afterDuration() async {
    let queue = QueueProbe.serialQueue("timers")
    let fired = Recorder<(Double, Place)>()
    let start = DispatchTime.now()
    queue.async(after: .milliseconds(200)) { fired.append((seconds(since: start), QueueProbe.here)) }
    let (elapsed, place) = await fired.first() ?? (0, .unnamed)
    #expect(elapsed >= 0.2)
    #expect(place == .queue("timers"))
  }

  @Test("async(after:) with zero or a negative delay runs the block as soon as possible")
  func afterNothing() async {
    let fired = Recorder<Int>()
    DispatchQueue.global().async(after: 0) { fired.append(1) }
    DispatchQueue.global().async(after: -5) { fired.append(2) }
    DispatchQueue.global().async(after: .seconds(-1)) { fired.append(3) }
    #expect(await fired.wait(forCount: 3))
    #expect(fired.values.sorted() == [1, 2, 3])
  }

  @Test("A discarded timer still fires, and is released once it has")
  func discardedTimerFiresAndIsReleased() async {
    let queue = QueueProbe.serialQueue("timers")
    let fired = Recorder<Bool>()
    weak var released: DispatchSource?
    do {
      let timer = queue.async(after: 0.05) { fired.append(true) }
      released = timer as? DispatchSource
      #expect(released != nil)
    }
    #expect(await fired.first() == true)
    // The timer cancelled itself when it fired; libdispatch then drops its handler (which
    // held it) on the queue. Give the queue a bounded number of turns to do so.
    var turns = 0
    while released != nil, turns < 1_000 {
      _ = await run(on: queue) { true }
      turns += 1
    }
    #expect(released == nil)
  }

  @Test("A timer cancelled before its deadline never runs its block")
  func cancelledBeforeDeadline() async {
    let queue = QueueProbe.serialQueue("timers")
    let fired = Recorder<String>()
    // Suspended, the queue cannot run the block even if this thread stalls past the
    // deadline before it cancels.
    queue.suspend()
    let timer = queue.async(after: 0.05) { fired.append("cancelled timer") }
    timer.cancel()
    queue.resume()
    queue.async(after: 0.3) { fired.append("later timer") }
    #expect(await fired.first() == "later timer")
    #expect(fired.values == ["later timer"])
  }

  @Test("A one-shot timer reads as cancelled once it has fired")
  func oneShotReadsCancelled() async {
    let queue = QueueProbe.serialQueue("timers")
    let seen = Recorder<Bool>()
    // Dispatch sources are thread-safe, but Dispatch does not declare the protocol Sendable.
    nonisolated(unsafe) let timer = queue.async(after: 0.01) { seen.append(true) }
    #expect(await seen.first() == true)
    #expect(await run(on: queue) { timer.isCancelled } == true)
  }

  // MARK: - async(at:)

  @Test("async(at:) with a date in the past runs the block at once")
  func atPastDate() async {
    let queue = QueueProbe.serialQueue("timers")
    let fired = Recorder<Double>()
    let start = DispatchTime.now()
    queue.async(at: Date(timeIntervalSinceNow: -3_600)) { fired.append(seconds(since: start)) }
    let elapsed = await fired.first()
    #expect(elapsed != nil)
    #expect((elapsed ?? .infinity) < 10)  // "at once", with room for a loaded machine
  }

  @Test("async(at:) with a future date runs the block on the queue, not before the date")
  func atFutureDate() async {
    let queue = QueueProbe.serialQueue("timers")
    let fired = Recorder<(Date, Place)>()
    let date = Date(timeIntervalSinceNow: 0.2)
    queue.async(at: date) { fired.append((Date(), QueueProbe.here)) }
    let (firedAt, place) = await fired.first() ?? (.distantPast, .unnamed)
    #expect(firedAt >= date)
    #expect(place == .queue("timers"))
  }

  @Test("async(at: .distantFuture) never fires and can be cancelled")
  func atDistantFuture() async {
    let fired = Recorder<Bool>()
    let timer = DispatchQueue.global().async(at: .distantFuture) { fired.append(true) }
    #expect(!timer.isCancelled)
    timer.cancel()
    #expect(timer.isCancelled)
    #expect(fired.count == 0)
  }

  // MARK: - async(every:)

  @Test("async(every:) fires repeatedly and stops for good when the block cancels its timer")
  func everyCancelsItselfFromInside() async {
    let queue = QueueProbe.serialQueue("timers")
    let runs = Recorder<Place>()
    let timer = queue.async(every: 0.01, startingIn: 0) { timer in
      runs.append(QueueProbe.here)
      if runs.count == 3 { timer.cancel() }
    }
    #expect(await runs.wait(forCount: 3))
    // Ten more intervals: a timer that kept running would fire again.
    let later = Recorder<Bool>()
    queue.async(after: 0.1) { later.append(true) }
    #expect(await later.first() == true)
    #expect(runs.count == 3)
    #expect(runs.values.allSatisfy { $0 == .queue("timers") })
    #expect(timer.isCancelled)
  }

  @Test("async(every:) without a timer parameter runs until the returned timer is cancelled")
  func everyCancelledFromOutside() async {
    let queue = QueueProbe.serialQueue("timers")
    let runs = Recorder<Bool>()
    let timer = queue.async(every: .milliseconds(10)) { runs.append(true) }
    #expect(await runs.wait(forCount: 3))
    timer.cancel()
    let countAfterCancel = await run(on: queue) { runs.count }  // after any run in progress
    let later = Recorder<Bool>()
    queue.async(after: 0.1) { later.append(true) }
    #expect(await later.first() == true)
    #expect(runs.count == countAfterCancel)
  }

  @Test("async(every:) starts one interval from now by default, never early")
  func everyDefaultStart() async {
    let queue = QueueProbe.serialQueue("timers")
    let firstRun = Recorder<Double>()
    let start = DispatchTime.now()
    queue.async(every: 0.2) { timer in
      timer.cancel()
      firstRun.append(seconds(since: start))
    }
    #expect((await firstRun.first() ?? 0) >= 0.2)
  }

  @Test("async(every:startingIn:) waits startingIn for the first run, never less", arguments: [0.0, 0.15])
  func everyStartingIn(delay: Double) async {
    let queue = QueueProbe.serialQueue("timers")
    let firstRun = Recorder<Double>()
    let start = DispatchTime.now()
    queue.async(every: 10, startingIn: delay) { timer in
      timer.cancel()
      firstRun.append(seconds(since: start))
    }
    let elapsed = await firstRun.first()
    #expect(elapsed != nil)
    #expect((elapsed ?? 0) >= delay)
  }

  @Test("async(every:startingAt:) starts at the date, never before; a past date starts at once")
  func everyStartingAt() async {
    let queue = QueueProbe.serialQueue("timers")
    let runs = Recorder<(String, Date)>()
    let future = Date(timeIntervalSinceNow: 0.2)
    queue.async(every: .seconds(10), startingAt: future) { timer in
      timer.cancel()
      runs.append(("future", Date()))
    }
    queue.async(every: .seconds(10), startingAt: .distantPast) { timer in
      timer.cancel()
      runs.append(("past", Date()))
    }
    #expect(await runs.wait(forCount: 2))
    let firedAt = Dictionary(uniqueKeysWithValues: runs.values)
    #expect(firedAt["past"] != nil)
    #expect(firedAt["future"].map { $0 >= future } == true)
  }

  @Test("A repeating timer that nobody keeps keeps running until its block cancels it")
  func discardedRepeatingTimerRuns() async {
    let runs = Recorder<Bool>()
    QueueProbe.serialQueue("timers").async(every: 0.01, startingIn: 0) { timer in
      runs.append(true)
      if runs.count == 5 { timer.cancel() }
    }
    #expect(await runs.wait(forCount: 5))
  }

  // MARK: - Misuse

  @Test("async(every:) with an interval that is not positive stops the program with a clear message")
  func everyRejectsNonPositiveInterval() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      DispatchQueue.global().async(every: 0) { _ in }
    }
    let standardError = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(standardError.contains("needs a positive, finite interval"))
  }

  @Test("async(every:) with both startingIn and startingAt stops the program with a clear message")
  func everyRejectsTwoStarts() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      DispatchQueue.global().async(every: 1, startingIn: 1, startingAt: Date()) { _ in }
    }
    let standardError = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(standardError.contains("startingIn or startingAt, not both"))
  }
}
