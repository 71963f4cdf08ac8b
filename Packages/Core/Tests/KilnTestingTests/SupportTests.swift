import Foundation
import KilnTesting
import Testing

@Suite("Gate", .timeLimit(.minutes(1)))
struct GateTests {
  @Test("a closed gate holds waiters until it opens")
  func holdsUntilOpen() async throws {
    let gate = Gate()
    let passed = Recorder<Int>()
    let waiters = (1...5).map { n in
      Task {
        try await gate.wait()
        passed.append(n)
      }
    }
    await gate.waitForWaiters(5)
    #expect(gate.waiterCount == 5)
    #expect(passed.values.isEmpty)
    #expect(gate.passedCount == 0)

    gate.open()
    for waiter in waiters { try await waiter.value }
    #expect(Set(passed.values) == Set(1...5))
    #expect(gate.waiterCount == 0)
    #expect(gate.passedCount == 5)
  }

  @Test("an open gate lets later waiters through until closed")
  func openAndClose() async throws {
    let gate = Gate(isOpen: true)
    try await gate.wait()
    #expect(gate.isOpen)
    gate.close()
    #expect(!gate.isOpen)
    let waiter = Task { try await gate.wait() }
    await gate.waitForWaiters(1)
    gate.open()
    try await waiter.value
    await gate.waitForPassed(2)
    #expect(gate.passedCount == 2)
  }

  @Test("a cancelled waiter leaves at once with CancellationError")
  func cancellation() async {
    let gate = Gate()
    let waiter = Task { try await gate.wait() }
    await gate.waitForWaiters(1)
    waiter.cancel()
    await #expect(throws: CancellationError.self) { try await waiter.value }
    #expect(gate.waiterCount == 0)
    #expect(gate.passedCount == 0)
  }

  @Test("cancellation racing with arrival never hangs")
  func cancellationRace() async {
    let gate = Gate()
    for _ in 0..<500 {
      let waiter = Task { try await gate.wait() }
      waiter.cancel()
      _ = await waiter.result
    }
    #expect(gate.waiterCount == 0)
  }
}

@Suite("AsyncCounter", .timeLimit(.minutes(1)))
struct AsyncCounterTests {
  @Test("wakes a waiter when the threshold is reached, not before")
  func threshold() async {
    let counter = AsyncCounter()
    let reached = Recorder<Int>()
    let waiter = Task {
      await counter.wait(untilAtLeast: 3)
      reached.append(counter.value)
    }
    counter.increment()
    counter.increment()
    #expect(reached.values.isEmpty)
    counter.add(5)
    await waiter.value
    #expect(reached.values == [7])
  }

  @Test("returns at once when already reached, and on cancellation")
  func immediateAndCancelled() async {
    let counter = AsyncCounter(2)
    await counter.wait(untilAtLeast: 2)
    let waiter = Task { await counter.wait(untilAtLeast: 100) }
    waiter.cancel()
    await waiter.value
    counter.decrement()
    #expect(counter.value == 1)
  }

  @Test("thousands of concurrent increments are all counted")
  func concurrentIncrements() async {
    let counter = AsyncCounter()
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<5_000 { group.addTask { counter.increment() } }
      group.addTask { await counter.wait(untilAtLeast: 5_000) }
    }
    #expect(counter.value == 5_000)
  }
}

@Suite("TestError and Recorder", .timeLimit(.minutes(1)))
struct SmallHelpersTests {
  @Test("TestError compares by name and reads well")
  func testError() {
    let error: TestError = "offline"
    #expect(error == TestError("offline"))
    #expect(error != TestError("online"))
    #expect(error.description == "TestError(offline)")
  }

  @Test("Recorder keeps values in order across tasks")
  func recorder() async {
    let recorder = Recorder<Int>()
    await withTaskGroup(of: Void.self) { group in
      for n in 0..<1_000 { group.addTask { recorder.append(n) } }
    }
    await recorder.waitForCount(1_000)
    #expect(recorder.values.sorted() == Array(0..<1_000))
    #expect(recorder.count == 1_000)
  }

  @Test("Recorder's timed wait returns true once the values arrive from another thread")
  func timedWaitSucceeds() async {
    let recorder = Recorder<Int>()
    Thread {
      for n in 0..<3 { recorder.append(n) }
    }.start()
    #expect(await recorder.waitForCount(3, timeout: .seconds(30)))
    #expect(recorder.values == [0, 1, 2])
  }

  @Test("Recorder's timed wait gives up after its timeout instead of hanging")
  func timedWaitTimesOut() async {
    let recorder = Recorder<Int>()
    recorder.append(1)
    #expect(await recorder.waitForCount(1, timeout: .milliseconds(1)))  // already there
    #expect(await recorder.waitForCount(2, timeout: .milliseconds(20)) == false)
  }

  @Test("Recorder's timed wait ends when its task is cancelled")
  func timedWaitCancelled() async {
    let recorder = Recorder<Int>()
    let waiting = Task { await recorder.waitForCount(1, timeout: .seconds(3_600)) }
    waiting.cancel()
    #expect(await waiting.value == false)
  }
}

@Suite("runOnOwnThread", .timeLimit(.minutes(1)))
struct RunOnOwnThreadTests {
  struct Refused: Error, Equatable {}

  @Test("returns what the body built on its own thread")
  func returnsValue() async {
    let (value, isMain) = await runOnOwnThread { () -> ([Int], Bool) in
      (Array(0..<1_000), Thread.isMainThread)
    }
    #expect(value == Array(0..<1_000))
    #expect(!isMain)
  }

  @Test("rethrows the body's typed error")
  func rethrowsTypedError() async {
    await #expect(throws: Refused()) {
      try await runOnOwnThread { () throws(Refused) -> Int in throw Refused() }
    }
  }

  @Test("hundreds of concurrent calls each get their own result")
  func concurrent() async {
    let sums = await withTaskGroup(of: Int.self) { group in
      for n in 0..<200 { group.addTask { await runOnOwnThread { (0...n).reduce(0, +) } } }
      return await group.reduce(into: 0) { $0 += $1 }
    }
    #expect(sums == (0..<200).reduce(0) { $0 + (0...$1).reduce(0, +) })
  }
}
