import Dispatch
import KilnTesting
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

  @Test("A queue stays current in a queue that targets it, also once that queue has a token of its own")
  func targetQueueBehindAnInnerToken() async {
    let outer = QueueProbe.serialQueue("outer")
    let inner = DispatchQueue(label: "kiln.tests.inner", target: outer)
    // What any synchronized(inner), .on(inner).sync or <<~inner ~~~ does first.
    #expect(QueueIdentity.token(for: inner) != nil)
    #expect(await run(on: inner) { QueueIdentity.isCurrent(outer) } == true)
    #expect(await run(on: inner) { QueueIdentity.isCurrent(inner) } == true)
    #expect(await run(on: outer) { QueueIdentity.isCurrent(inner) } == false)
  }

  @Test("Every queue of a chain of three is current in the innermost, whatever tokens they have")
  func chainOfTargets() async {
    let root = QueueProbe.serialQueue("root")
    let middle = DispatchQueue(label: "kiln.tests.middle", target: root)
    let leaf = DispatchQueue(label: "kiln.tests.leaf", target: middle)
    for queue in [leaf, middle, root] { _ = QueueIdentity.token(for: queue) }
    #expect(await run(on: leaf) { [root, middle, leaf].map(QueueIdentity.isCurrent) } == [true, true, true])
    #expect(await run(on: middle) { [root, middle, leaf].map(QueueIdentity.isCurrent) } == [true, true, false])
  }

  @Test("The main queue is current in a queue that targets it, also once that queue has a token of its own")
  func mainQueueBehindAnInnerToken() async {
    let inner = DispatchQueue(label: "kiln.tests.main-inner", target: .main)
    _ = QueueIdentity.token(for: inner)
    #expect(await run(on: inner) { QueueIdentity.isOnMainQueue } == true)
    #expect(await run(on: inner) { QueueIdentity.isCurrent(.main) } == true)
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
    let tokens = Recorder<ObjectIdentifier>()
    DispatchQueue.concurrentPerform(iterations: 64) { _ in
      if let token = QueueIdentity.token(for: queue) { tokens.append(ObjectIdentifier(token)) }
    }
    #expect(tokens.count == 64)
    #expect(Set(tokens.values).count == 1)
  }
}
