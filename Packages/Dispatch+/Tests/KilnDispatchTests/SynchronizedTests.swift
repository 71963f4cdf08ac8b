import Dispatch
import Foundation
import KilnDispatch
import Testing

/// A counter whose increments are only safe under an outside lock: the subject of the
/// `synchronized` tests.
///
/// `@unchecked Sendable` is the point of the test: every access goes through
/// `synchronized`, and Thread Sanitizer reports the test if one does not.
private final class UnguardedCounter: @unchecked Sendable {
  var value = 0
}

private struct Refused: Error, Equatable {}

@Suite("synchronized(_:_:)", .timeLimit(.minutes(1)))
struct SynchronizedTests {
  @Test("synchronized(lock) makes concurrent read-modify-writes exact and returns the body's value")
  func lockCounts() {
    let lock = NSLock()
    let counter = UnguardedCounter()
    DispatchQueue.concurrentPerform(iterations: 1_000) { _ in
      synchronized(lock) { counter.value += 1 }
    }
    #expect(synchronized(lock) { counter.value } == 1_000)
  }

  @Test("synchronized(lock) rethrows the body's typed error and releases the lock")
  func lockThrows() {
    let lock = NSLock()
    #expect(throws: Refused()) {
      try synchronized(lock) { () throws(Refused) -> Int in throw Refused() }
    }
    #expect(lock.try())
    lock.unlock()
  }

  @Test("synchronized(recursiveLock) can be re-entered")
  func recursiveLock() {
    let lock = NSRecursiveLock()
    let value = synchronized(lock) { synchronized(lock) { 7 } }
    #expect(value == 7)
  }

  @Test("synchronized(queue) runs the body on the queue and makes concurrent updates exact")
  func queueCounts() {
    let queue = QueueProbe.serialQueue("state")
    let counter = UnguardedCounter()
    DispatchQueue.concurrentPerform(iterations: 1_000) { _ in
      synchronized(queue) { counter.value += 1 }
    }
    #expect(synchronized(queue) { counter.value } == 1_000)
    #expect(synchronized(queue) { QueueProbe.here } == .queue("state"))
  }

  @Test("synchronized(queue) from the queue itself runs inline instead of deadlocking")
  func queueReentrant() async {
    let queue = QueueProbe.serialQueue("state")
    let value = await run(on: queue) {
      synchronized(queue) { synchronized(queue) { QueueProbe.here } }
    }
    #expect(value == .queue("state"))
  }

  @Test("synchronized(queue) rethrows the body's typed error")
  func queueThrows() {
    let queue = QueueProbe.serialQueue("state")
    #expect(throws: Refused()) {
      try synchronized(queue) { () throws(Refused) -> Int in throw Refused() }
    }
  }
}
