import Dispatch
import Foundation
import KilnDispatch
import KilnTesting
import Testing

/// Many randomized concurrent operations, checked against the invariants the API promises.
/// They run under Thread Sanitizer in CI, which is where they earn their keep.
@Suite("Stress: randomized concurrent use", .timeLimit(.minutes(1)))
struct StressTests {
  @Test("Thousands of once calls from many threads run exactly one block per operation ID")
  func onceStorm() async {
    let queue = QueueProbe.serialQueue("once")
    let random = SharedRandom()
    let prefix = UUID().uuidString
    let runs = Recorder<Int>()
    queue.suspend()
    DispatchQueue.concurrentPerform(iterations: 2_000) { call in
      let id = call % 20
      if call % 7 == 0 {
        _ = DispatchQueue.isOncePending(operationId: "\(prefix)-\(id)")  // readers mixed in
      }
      queue.once(operationId: "\(prefix)-\(id)", after: .milliseconds(random.int(in: 0...20))) { runs.append(id) }
    }
    queue.resume()
    #expect(await runs.wait(forCount: 20))
    let settled = Recorder<Bool>()
    queue.async(after: 0.3) { settled.append(true) }
    await settled.wait()
    #expect(runs.values.sorted() == Array(0..<20))
  }

  @Test("Racing callbacks, late callbacks and cancellations: every bridge resumes once, hooks only on cancellation")
  func bridgeStorm() async {
    struct Outcome: Sendable {
      var index: Int
      var value: Int?
    }
    let hookCalls = Recorder<Int>()
    let random = SharedRandom()
    let outcomes = await withTaskGroup(of: Outcome.self) { group in
      for index in 1...300 {
        group.addTask {
          let scenario = index % 3
          let task = Task { () throws(CancellationError) -> Int in
            try await withCancellableCallback { (callback: @escaping Callback<Int>) in
              switch scenario {
              case 0:  // called back at once, twice, from two threads
                Callee.queue.async { callback(index) }
                DispatchQueue.global().async { callback(-index) }
              case 1:  // called back a little later
                Callee.queue.async(after: .microseconds(random.int(in: 0...500))) { callback(index) }
              default:  // cancelled first; called back after that
                Callee.queue.async(after: .milliseconds(5)) { callback(index) }
              }
              return { hookCalls.append(index) }
            }
          }
          if scenario == 2 || random.bool() { task.cancel() }
          return Outcome(index: index, value: try? await task.value)
        }
      }
      return await group.reduce(into: []) { $0.append($1) }
    }
    // Cancelled before its callback could come, a bridge never delivers a value.
    #expect(outcomes.filter { $0.index % 3 == 2 }.allSatisfy { $0.value == nil }, "\(TestSeed.comment)")
    #expect(outcomes.allSatisfy { $0.value == nil || $0.value == $0.index || $0.value == -$0.index })
    // The hook has run by the time a task sees its cancellation, at most once, and never
    // for a bridge that delivered a value.
    let cancelled = Set(outcomes.filter { $0.value == nil }.map(\.index))
    let hooked = hookCalls.values
    #expect(Set(hooked).count == hooked.count)
    #expect(Set(hooked).isSubset(of: cancelled))
  }

  @Test("Hundreds of <<- waits with racing double callbacks each return one of the values")
  func waitStorm() async {
    let callers = (0..<4).map { QueueProbe.serialQueue("caller-\($0)") }
    let results = Recorder<Bool>()
    for caller in callers {
      caller.async {
        for round in 0..<100 {
          let value = <<-{ (callback: @escaping Callback<Int>) in
            Callee.queue.async { callback(round) }
            DispatchQueue.global().async { callback(round + 1_000) }
          }
          results.append(value == round || value == round + 1_000)
        }
      }
    }
    #expect(await results.wait(forCount: 400))
    #expect(results.values.allSatisfy { $0 })
  }
}
