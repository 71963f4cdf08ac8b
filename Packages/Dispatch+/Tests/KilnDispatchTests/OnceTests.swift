import Dispatch
import Foundation
import KilnDispatch
import KilnTesting
import Testing

@Suite("DispatchQueue.once(operationId:): a debounce", .timeLimit(.minutes(1)))
struct OnceTests {
  /// A fresh operation ID: the registry is global, tests run in parallel.
  private func uniqueID(_ name: String = #function) -> String {
    "\(name)-\(UUID().uuidString)"
  }

  /// Waits until every timer `queue` had pending for `seconds` would have fired.
  private func settle(_ queue: DispatchQueue, after seconds: Double = 0.3) async {
    let settled = Recorder<Bool>()
    queue.async(after: seconds) { settled.append(true) }
    await settled.wait()
  }

  @Test("Ten quick calls run exactly one block: the newest")
  func tenQuickCalls() async {
    let id = uniqueID()
    let queue = QueueProbe.serialQueue("once")
    let runs = Recorder<Int>()
    // A suspended queue makes the ten calls "quick" whatever the machine's load: no timer
    // can run its block before the last call is made.
    queue.suspend()
    for call in 1...10 {
      queue.once(operationId: id, after: 0.05) { runs.append(call) }
    }
    queue.resume()
    #expect(await runs.first() == 10)
    await settle(queue)
    #expect(runs.values == [10])
  }

  @Test("Ten quick calls on a running queue run exactly one block, the newest, a delay after the last call")
  func tenQuickCallsLive() async {
    let id = uniqueID()
    let queue = QueueProbe.serialQueue("once")
    let runs = Recorder<(Int, Place)>()
    for call in 1...10 {
      queue.once(operationId: id, after: 1) { runs.append((call, QueueProbe.here)) }
    }
    let (call, place) = await runs.first() ?? (0, .unnamed)
    #expect(call == 10)
    #expect(place == .queue("once"))
    await settle(queue)
    #expect(runs.count == 1)
  }

  @Test("Calls racing from many threads run exactly one block")
  func racingCalls() async {
    let id = uniqueID()
    let queue = QueueProbe.serialQueue("once")
    let runs = Recorder<Int>()
    queue.suspend()
    DispatchQueue.concurrentPerform(iterations: 50) { call in
      queue.once(operationId: id, after: .milliseconds(20)) { runs.append(call) }
    }
    queue.resume()
    #expect(await runs.wait(forCount: 1))
    await settle(queue)
    #expect(runs.count == 1)
  }

  @Test("Each call restarts the delay: the block runs a full delay after the last call, never earlier")
  func restartsTheDelay() async {
    let id = uniqueID()
    let queue = QueueProbe.serialQueue("once")
    let runs = Recorder<(String, Double)>()
    let start = DispatchTime.now()
    queue.once(operationId: id, after: 1) { runs.append(("first", seconds(since: start))) }
    // The second call comes 0.2 s later, from a timer: the first block must not run, the
    // second runs 1 s after it, at 1.2 s (0.8 s of margin for a loaded machine).
    queue.async(after: 0.2) {
      queue.once(operationId: id, after: 1) { runs.append(("second", seconds(since: start))) }
    }
    let (which, elapsed) = await runs.first() ?? ("none", 0)
    #expect(which == "second")
    #expect(elapsed >= 1.2)
    await settle(queue)
    #expect(runs.count == 1)
  }

  @Test("A call after the block ran starts a new burst")
  func newBurstAfterRun() async {
    let id = uniqueID()
    let queue = QueueProbe.serialQueue("once")
    let runs = Recorder<Int>()
    queue.once(operationId: id, after: 0.01) { runs.append(1) }
    #expect(await runs.wait(forCount: 1))
    #expect(!DispatchQueue.isOncePending(operationId: id))
    queue.once(operationId: id, after: 0.01) { runs.append(2) }
    #expect(await runs.wait(forCount: 2))
    #expect(runs.values == [1, 2])
  }

  @Test("Different operation IDs do not coalesce")
  func independentIDs() async {
    let queue = QueueProbe.serialQueue("once")
    let runs = Recorder<String>()
    queue.once(operationId: uniqueID("a"), after: 0.01) { runs.append("a") }
    queue.once(operationId: uniqueID("b"), after: 0.01) { runs.append("b") }
    #expect(await runs.wait(forCount: 2))
    #expect(runs.values.sorted() == ["a", "b"])
  }

  @Test("A newer call on another queue replaces the pending one and runs on its own queue")
  func acrossQueues() async {
    let id = uniqueID()
    let first = QueueProbe.serialQueue("first")
    let second = QueueProbe.serialQueue("second")
    let runs = Recorder<Place>()
    first.suspend()
    first.once(operationId: id, after: 0.01) { runs.append(QueueProbe.here) }
    second.once(operationId: id, after: 0.01) { runs.append(QueueProbe.here) }
    first.resume()
    #expect(await runs.first() == .queue("second"))
    await settle(first)
    #expect(runs.count == 1)
  }

  @Test("cancelOnce drops the pending block and reports whether there was one")
  func cancelOnce() async {
    let id = uniqueID()
    let queue = QueueProbe.serialQueue("once")
    let runs = Recorder<Bool>()
    queue.suspend()  // the block cannot run before it is cancelled, however slow this thread
    queue.once(operationId: id, after: 0.05) { runs.append(true) }
    #expect(DispatchQueue.isOncePending(operationId: id))
    #expect(DispatchQueue.cancelOnce(operationId: id))
    #expect(!DispatchQueue.isOncePending(operationId: id))
    #expect(!DispatchQueue.cancelOnce(operationId: id))
    queue.resume()
    await settle(queue)
    #expect(runs.count == 0)
  }

  @Test("Cancelling the newest call's timer cancels the operation; cancelling a replaced one changes nothing")
  func cancellingTimers() async {
    let queue = QueueProbe.serialQueue("once")
    let runs = Recorder<String>()
    queue.suspend()  // no block can run before the cancellations, however slow this thread

    let cancelledID = uniqueID("cancelled")
    queue.once(operationId: cancelledID, after: 0.1) { runs.append("replaced") }
    let newest = queue.once(operationId: cancelledID, after: 0.1) { runs.append("cancelled") }
    newest.cancel()

    let keptID = uniqueID("kept")
    let replaced = queue.once(operationId: keptID, after: 0.1) { runs.append("replaced") }
    queue.once(operationId: keptID, after: 0.1) { runs.append("kept") }
    replaced.cancel()
    queue.resume()

    #expect(await runs.first() == "kept")
    await settle(queue)
    #expect(runs.values == ["kept"])
    #expect(!DispatchQueue.isOncePending(operationId: cancelledID))
  }

  @Test("once(operationId:at:) with a date in the past runs at once; without a delay, as soon as possible")
  func atAndAsap() async {
    let queue = QueueProbe.serialQueue("once")
    let runs = Recorder<String>()
    queue.once(operationId: uniqueID("at"), at: .distantPast) { runs.append("at") }
    queue.once(operationId: uniqueID("asap")) { runs.append("asap") }
    #expect(await runs.wait(forCount: 2))
    #expect(runs.values.sorted() == ["asap", "at"])
  }

  @Test("once(operationId:after:at:) with both a delay and a date stops the program with a clear message")
  func rejectsDelayAndDate() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      DispatchQueue.global().once(operationId: "both", after: 1, at: Date()) {}
    }
    let standardError = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(standardError.contains("takes after or at, not both"))
  }
}
