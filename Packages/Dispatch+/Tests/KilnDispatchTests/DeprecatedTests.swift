import Dispatch
import Foundation
import KilnDispatch
import KilnTesting
import Testing

/// Appends from many blocks without a lock: only safe when the blocks run one at a time,
/// which is what the named-queue test checks (Thread Sanitizer reports it otherwise).
private final class UnguardedLog: @unchecked Sendable {
  var entries: [Int] = []
}

/// Brisk's Swift 2-era global helpers still compile and do what they did. Every test is
/// itself deprecated, which keeps the deliberate calls to deprecated API free of warnings
/// (the build treats warnings as errors).
@Suite("Deprecated Brisk global helpers", .timeLimit(.minutes(1)))
struct DeprecatedTests {
  @available(*, deprecated, message: "Exercises deprecated API on purpose")
  @Test("dispatch_main_async and dispatch_bg_async run on the main and the global queue")
  func mainAndBackground() async {
    let places = Recorder<(String, Place)>()
    dispatch_main_async { places.append(("main", QueueProbe.here)) }
    dispatch_bg_async {
      dispatchPrecondition(condition: .onQueue(.global()))
      places.append(("background", QueueProbe.here))
    }
    #expect(await places.wait(forCount: 2))
    #expect(Dictionary(uniqueKeysWithValues: places.values) == ["main": .main, "background": .unnamed])
  }

  @available(*, deprecated, message: "Exercises deprecated API on purpose")
  @Test("dispatch_main_sync runs the block on the main queue before it returns")
  func mainSync() async {
    let place = await run(on: QueueProbe.serialQueue("caller")) { () -> Place? in
      let seen = Recorder<Place>()
      dispatch_main_sync { seen.append(QueueProbe.here) }
      return seen.values.first  // already there: the call waited
    }
    #expect(place == .main)
  }

  @available(*, deprecated, message: "Exercises deprecated API on purpose")
  @Test("dispatch_main_sync from the main queue runs inline instead of deadlocking")
  @MainActor
  func mainSyncOnMain() {
    let seen = Recorder<Place>()
    dispatch_main_sync { seen.append(QueueProbe.here) }
    #expect(seen.values == [.main])
  }

  @available(*, deprecated, message: "Exercises deprecated API on purpose")
  @Test("dispatch_async(name) runs blocks of one name on one serial queue, in order")
  func namedQueue() async {
    let name = "kiln.tests.named-\(UUID().uuidString)"
    let log = UnguardedLog()
    let done = Recorder<[Int]>()
    for index in 0..<100 {
      dispatch_async(name) { log.entries.append(index) }
    }
    dispatch_async(name) { done.append(log.entries) }
    #expect(await done.first() == Array(0..<100))
  }

  @available(*, deprecated, message: "Exercises deprecated API on purpose")
  @Test("dispatch_after and dispatch_after_exactly run on the queue, never early")
  func after() async {
    let queue = QueueProbe.serialQueue("timers")
    let fired = Recorder<(String, Double, Place)>()
    let start = DispatchTime.now()
    dispatch_after(0.1, queue) { fired.append(("loose", seconds(since: start), QueueProbe.here)) }
    dispatch_after_exactly(0.1, queue) { fired.append(("exact", seconds(since: start), QueueProbe.here)) }
    dispatch_main_after(0.1) { fired.append(("main", seconds(since: start), QueueProbe.here)) }
    dispatch_main_after_exactly(0.1) { fired.append(("main exact", seconds(since: start), QueueProbe.here)) }
    #expect(await fired.wait(forCount: 4))
    #expect(fired.values.allSatisfy { $0.1 >= 0.1 })
    let places = Dictionary(uniqueKeysWithValues: fired.values.map { ($0.0, $0.2) })
    #expect(places == ["loose": .queue("timers"), "exact": .queue("timers"), "main": .main, "main exact": .main])
  }

  @available(*, deprecated, message: "Exercises deprecated API on purpose")
  @Test("dispatch_every and its variants repeat until the timer they pass is cancelled")
  func every() async {
    let queue = QueueProbe.serialQueue("timers")
    let runs = Recorder<(String, Place)>()
    func stopAfterThree(_ name: String) -> @Sendable (any DispatchSourceTimer) -> Void {
      { timer in
        runs.append((name, QueueProbe.here))
        if runs.values.filter({ $0.0 == name }).count == 3 { timer.cancel() }
      }
    }
    dispatch_every(0.01, queue, stopAfterThree("loose"))
    dispatch_every_exact(0.01, queue, stopAfterThree("exact"))
    dispatch_main_every(0.01, stopAfterThree("main"))
    dispatch_main_every_exact(0.01, stopAfterThree("main exact"))
    #expect(await runs.wait(forCount: 12))
    let settled = Recorder<Bool>()
    queue.async(after: 0.3) { settled.append(true) }
    await settled.wait()
    let counts = Dictionary(grouping: runs.values, by: \.0).mapValues(\.count)
    #expect(counts == ["loose": 3, "exact": 3, "main": 3, "main exact": 3])
    #expect(runs.values.allSatisfy { $0.1 == ($0.0.hasPrefix("main") ? .main : .queue("timers")) })
  }

  @available(*, deprecated, message: "Exercises deprecated API on purpose")
  @Test("dispatch_once_after and dispatch_main_once_after, in both spellings, run the newest block once")
  func onceAfter() async {
    let queue = QueueProbe.serialQueue("once")
    let runs = Recorder<String>()
    let ids = (0..<4).map { _ in UUID().uuidString }
    queue.suspend()
    for call in 1...3 {
      dispatch_once_after(0.01, queue, ids[0]) { runs.append("positional \(call)") }
      dispatch_once_after(0.01, operationId: ids[1], onQueue: queue) { runs.append("labelled \(call)") }
    }
    queue.resume()
    for call in 1...3 {
      // The main queue cannot be suspended: a delay long enough for three quick calls.
      dispatch_main_once_after(1, ids[2]) { runs.append("main positional \(call)") }
      dispatch_main_once_after(1, operationId: ids[3]) { runs.append("main labelled \(call)") }
    }
    #expect(await runs.wait(forCount: 4))
    let settled = Recorder<Bool>()
    queue.async(after: 0.3) { settled.append(true) }
    await settled.wait()
    #expect(runs.values.sorted() == ["labelled 3", "main labelled 3", "main positional 3", "positional 3"])
  }

  @available(*, deprecated, message: "Exercises deprecated API on purpose")
  @Test("dispatch_each calls the block once for every element, in both spellings, before returning")
  func each() {
    let seen = Recorder<Int>()
    dispatch_each(Array(0..<100), .global()) { seen.append($0) }
    #expect(seen.values.sorted() == Array(0..<100))
    dispatch_each(Array(100..<150), queue: .global()) { seen.append($0) }
    #expect(seen.values.sorted() == Array(0..<150))
  }
}
