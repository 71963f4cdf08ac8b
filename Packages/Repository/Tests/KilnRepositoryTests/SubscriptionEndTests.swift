import Foundation
import KilnRepository
import KilnRepositoryTesting
import KilnTesting
import Testing

/// How a subscription ends, and what it receives until then: every way a subscriber leaves
/// unsubscribes it (seen as its abandoned fetch being cancelled), and a subscriber that reads
/// late gets the newest states, in order.
@Suite(.timeLimit(.minutes(1)))
struct SubscriptionEndTests {
  let clock = ManualClock()

  @Test("breaking out of for-await unsubscribes: the fetch nobody waits for is cancelled")
  func breakUnsubscribes() async {
    let repository = Repository<String, Int>(clock: clock)
    let fetcher = ControlledFetcher<String, Int>()
    let flowable = AnyStoreFlowable.from(cacher: repository, fetcher: fetcher, param: "a")
    for await state in flowable.publish() {
      #expect(state == .loading(content: nil))
      await fetcher.waitForCall(0)
      break
    }
    await fetcher.waitForCancelledCalls(1)
    #expect(fetcher.cancelledCount == 1)
  }

  @Test("an iterator dropped before its first read unsubscribes")
  func droppedIteratorUnsubscribes() async {
    let repository = Repository<String, Int>(clock: clock)
    let fetcher = ControlledFetcher<String, Int>()
    let flowable = AnyStoreFlowable.from(cacher: repository, fetcher: fetcher, param: "a")
    let watcher = LoadingStateRecorder(flowable.publish())
    await fetcher.waitForCall(0)
    do {
      var iterator = flowable.publish().makeAsyncIterator()
      #expect(await iterator.next() == .loading(content: nil))
    }
    // The dropped one is gone; the watcher still holds the fetch.
    #expect(fetcher.endedCount == 0)
    await watcher.stop()
    await fetcher.waitForCancelledCalls(1)
    #expect(fetcher.cancelledCount == 1)
  }

  @Test("a task cancelled while it waits for the next state gets nil, and unsubscribes")
  func cancelledWhileWaiting() async {
    let repository = Repository<String, Int>(clock: clock)
    let fetcher = ControlledFetcher<String, Int>()
    let flowable = AnyStoreFlowable.from(cacher: repository, fetcher: fetcher, param: "a")
    let readFirst = AsyncCounter()
    let reader = Task {
      var iterator = flowable.publish().makeAsyncIterator()
      let first = await iterator.next()
      readFirst.increment()
      let second = await iterator.next()
      let third = await iterator.next()
      return [first, second, third]
    }
    await fetcher.waitForCall(0)
    await readFirst.wait(untilAtLeast: 1)
    reader.cancel()
    #expect(await reader.value == [.loading(content: nil), nil, nil])
    await fetcher.waitForCancelledCalls(1)
    #expect(fetcher.cancelledCount == 1)
  }

  @Test("a cancelled task reads nil even with states waiting for it")
  func cancelledWithBufferedStates() async {
    let repository = Repository<String, Int>(clock: clock)
    await AnyStoreFlowable.from(cacher: repository, fetcher: CountingFetcher { _ in 0 }, param: "a").update(1)
    let flowable = AnyStoreFlowable.from(cacher: repository, fetcher: CountingFetcher { _ in 0 }, param: "a")
    let started = AsyncCounter()
    let reader = Task {
      var iterator = flowable.publish().makeAsyncIterator()
      let first = await iterator.next()
      started.increment()
      // States arrive while this task is cancelled: it must not read them.
      while !Task.isCancelled { await Task.yield() }
      return (first, await iterator.next())
    }
    await started.wait(untilAtLeast: 1)
    await flowable.update(2)
    await flowable.update(3)
    reader.cancel()
    let (first, afterCancel) = await reader.value
    #expect(first == completed(1))
    #expect(afterCancel == nil)
  }

  @Test("a subscriber that reads late gets the newest 64 states in order, none twice: it holds no more")
  func lateReaderGetsTheNewestStates() async {
    let repository = Repository<String, Int>(clock: clock)
    let flowable = AnyStoreFlowable.from(cacher: repository, fetcher: CountingFetcher { _ in 0 }, param: "a")
    await flowable.update(0)
    var iterator = flowable.publish().makeAsyncIterator()
    // Nobody reads while 1,000 updates are delivered.
    for value in 1...1_000 { await flowable.update(value) }
    var seen: [Int] = []
    await iterator.readContents(into: &seen, through: 1_000)
    #expect(seen == Array(937...1_000))
  }

  @Test("a subscriber that keeps up gets every state while another never reads")
  func slowSubscriberSlowsNobody() async {
    let repository = Repository<String, Int>(clock: clock)
    let flowable = AnyStoreFlowable.from(cacher: repository, fetcher: CountingFetcher { _ in 0 }, param: "a")
    await flowable.update(0)
    var idle = flowable.publish().makeAsyncIterator()
    var reader = flowable.publish().makeAsyncIterator()
    var seen: [Int] = []
    for value in 1...2_000 {
      await flowable.update(value)
      await reader.readContents(into: &seen, through: value)
    }
    #expect(seen == Array(0...2_000))
    // The idle one holds the newest 64 only.
    var late: [Int] = []
    await idle.readContents(into: &late, through: 2_000)
    #expect(late == Array(1_937...2_000))
  }
}

extension LoadingStateSequence<Int>.AsyncIterator {
  /// Reads states, appending their content to `contents`, until the content `last` is read
  /// (or the sequence ends).
  mutating func readContents(into contents: inout [Int], through last: Int) async {
    while contents.last != last, let state = await next() {
      if let content = state.content { contents.append(content) }
    }
  }
}
