import Testing
import _KilnSynchronization

@testable import KilnRepository

/// The bound of one subscriber's inbox, in memory as well as in what it delivers.
@Suite("SubscriberInbox", .timeLimit(.minutes(1)))
struct SubscriberInboxTests {
  func snapshot(_ value: Int) -> LoadingSnapshot<Int> {
    LoadingSnapshot(state: .loading(content: value), origin: nil)
  }

  @Test("a subscriber that reads one or two behind forever gets every snapshot and holds a bounded buffer")
  func laggingReaderHoldsABoundedBuffer() async {
    let inbox = SubscriberInbox<Int>(replay: snapshot(0), onFinish: {})
    inbox.yield(snapshot(1))
    var seen: [Int] = []
    var largest = 0
    for value in 2...10_000 {
      if let read = await inbox.next() { seen.append(read.state.content ?? -1) }
      inbox.yield(snapshot(value))
      largest = max(largest, inbox.slotCount)
    }
    await inbox.readContents(into: &seen, through: 10_000)
    #expect(seen == Array(0...10_000))
    #expect(largest <= 2 * SubscriberInbox<Int>.capacity)
    inbox.finish()
  }

  @Test("a subscriber that never reads keeps the newest 64 and at most 128 slots")
  func idleReaderKeepsTheNewest() async {
    let inbox = SubscriberInbox<Int>(replay: nil, onFinish: {})
    var largest = 0
    for value in 1...1_000 {
      inbox.yield(snapshot(value))
      largest = max(largest, inbox.slotCount)
    }
    #expect(largest <= 2 * SubscriberInbox<Int>.capacity)
    var seen: [Int] = []
    await inbox.readContents(into: &seen, through: 1_000)
    #expect(seen == Array(937...1_000))
    inbox.finish()
  }

  @Test("a task cancelled with snapshots buffered gets nil, not them, and the inbox finishes once")
  func cancelledReaderWithBufferedSnapshotsGetsNil() async {
    let finished = Counter()
    let inbox = SubscriberInbox<Int>(replay: snapshot(0), onFinish: { finished.increment() })
    inbox.yield(snapshot(1))
    let reader = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      return await inbox.next()
    }
    #expect(await reader.value == nil)
    #expect(finished.value == 1)
    #expect(inbox.slotCount == 0)
    inbox.yield(snapshot(2))  // after the end: dropped
    #expect(inbox.slotCount == 0)
    inbox.finish()
    #expect(finished.value == 1)
  }

  @Test("a task cancelled before it waits, with nothing buffered, gets nil at once and the inbox finishes")
  func cancelledReaderWithNothingBufferedGetsNil() async {
    let finished = Counter()
    let inbox = SubscriberInbox<Int>(replay: nil, onFinish: { finished.increment() })
    let reader = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      return await inbox.next()
    }
    #expect(await reader.value == nil)
    #expect(finished.value == 1)
  }

  @Test("a task cancelled while it waits gets nil at once")
  func cancelledWaiterGetsNil() async {
    let inbox = SubscriberInbox<Int>(replay: nil, onFinish: {})
    let reader = Task { await inbox.next() }
    while inbox.isWaiting == false { await Task.yield() }
    reader.cancel()
    #expect(await reader.value == nil)
  }
}

/// Counts calls from any task.
final class Counter: Sendable {
  private let count = KilnMutex(0)
  var value: Int { count.withLock { $0 } }
  func increment() { count.withLock { $0 += 1 } }
}

extension SubscriberInbox<Int> {
  /// Whether a reader is suspended waiting for a snapshot.
  var isWaiting: Bool {
    state.withLock { $0.waiter != nil }
  }

  /// Reads snapshots, appending their content to `contents`, until the content `last` is
  /// read (or the inbox ends).
  func readContents(into contents: inout [Int], through last: Int) async {
    while contents.last != last, let read = await next() { contents.append(read.state.content ?? -1) }
  }
}
