import Dispatch
import Testing

@testable import KilnDispatch

@Suite("QueueIdentity: knowing the current queue", .timeLimit(.minutes(1)))
struct QueueIdentityTests {
  @Test("A queue is current inside its own blocks and in queues that target it, nowhere else")
  func currentQueue() async {
    let queue = QueueProbe.serialQueue("outer")
    let inner = DispatchQueue(label: "kiln.tests.inner", target: queue)
    let other = QueueProbe.serialQueue("other")
    #expect(await run(on: queue) { QueueIdentity.isCurrent(queue) } == true)
    #expect(await run(on: inner) { QueueIdentity.isCurrent(queue) } == true)
    #expect(await run(on: other) { QueueIdentity.isCurrent(queue) } == false)
    #expect(await run(on: queue) { QueueIdentity.isCurrent(other) } == false)
  }

  @Test("Global queues are never current and are left untouched (they refuse specifics)")
  func globalQueues() async {
    let global = DispatchQueue.global()
    #expect(await run(on: global) { QueueIdentity.isCurrent(global) } == false)
    #expect(QueueIdentity.token(for: .global(qos: .utility)) == nil)
  }

  @Test("The main queue is current on the main actor and not on another queue")
  @MainActor
  func mainQueue() async {
    #expect(QueueIdentity.isOnMainQueue)
    #expect(QueueIdentity.isCurrent(.main))
    #expect(await run(on: QueueProbe.serialQueue("other")) { QueueIdentity.isOnMainQueue } == false)
  }

  @Test("Threads asking about a new queue at the same time agree on one token")
  func tokenRace() {
    let queue = DispatchQueue(label: "kiln.tests.race")
    let tokens = Mailbox<ObjectIdentifier>()
    DispatchQueue.concurrentPerform(iterations: 64) { _ in
      if let token = QueueIdentity.token(for: queue) { tokens.put(ObjectIdentifier(token)) }
    }
    #expect(tokens.count == 64)
    #expect(Set(tokens.all).count == 1)
  }
}
