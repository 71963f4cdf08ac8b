import KilnRepository
import KilnRepositoryTesting
import KilnTesting
import Testing
import _KilnSynchronization

/// Many subscribers and many concurrent operations: no lost, duplicate or stale state, one
/// fetch per refresh, and nothing left after everyone leaves.
@Suite(.timeLimit(.minutes(2)))
struct StressTests {
  static func consecutiveDuplicates(_ states: [LoadingState<Int>]) -> Int {
    zip(states, states.dropFirst()).filter { $0 == $1 }.count
  }

  @Test("1,000 subscribers × 100 refreshes: everyone sees every state, one fetch per refresh, nothing leaks")
  func thousandSubscribersHundredRefreshes() async {
    let clock = ManualClock()
    let repository = Repository<String, Int>(clock: clock, releaseAfter: .seconds(1))
    let counter = AsyncCounter()
    let fetcher = CountingFetcher<Int> { _ in
      counter.increment()
      return counter.value
    }
    let flowable = AnyStoreFlowable.from(cacher: repository, fetcher: fetcher, param: "feed")
    await flowable.update(0)
    let subscribers = (0..<1_000).map { _ in LoadingStateRecorder(flowable.publish()) }
    for subscriber in subscribers { await subscriber.waitForCount(1) }
    for _ in 0..<100 { await flowable.refresh() }
    #expect(fetcher.calls.value == 100)
    var expected: [LoadingState<Int>] = [completed(0)]
    for value in 1...100 { expected += [.loading(content: value - 1), completed(value)] }
    for subscriber in subscribers {
      #expect(await subscriber.waitForCount(201) == expected)
    }
    for subscriber in subscribers { await subscriber.stop() }
    for _ in 0..<1_000 where repository.count > 0 {
      clock.advance(by: .seconds(1))
      await Task.yield()
    }
    #expect(repository.count == 0)
    #expect(await flowable.getData(from: .cache) == 100)
  }

  @Test("thousands of concurrent refreshes, updates, reads and subscriptions keep every invariant")
  func concurrentOperations() async {
    let repository = Repository<String, Int>(clock: ManualClock())
    let fetcher = CountingFetcher<Int> { _ in
      await Task.yield()
      return Int.random(in: 0..<1_000)
    }
    let flowables = (0..<4).map { AnyStoreFlowable.from(cacher: repository, fetcher: fetcher, param: "p\($0)") }
    let subscribers = flowables.flatMap { flowable in (0..<25).map { _ in LoadingStateRecorder(flowable.publish()) } }
    await withTaskGroup(of: Void.self) { group in
      for index in 0..<4_000 {
        let flowable = flowables[index % 4]
        group.addTask {
          switch index % 5 {
          case 0: await flowable.refresh()
          case 1: await flowable.update(-index)
          case 2: _ = await flowable.getData()
          case 3: await flowable.validate()
          default:
            let transient = LoadingStateRecorder(flowable.publish())
            _ = await transient.waitForCount(1)
            await transient.stop()
          }
        }
      }
    }
    // A final write wins over everything before it, for every subscriber and in the cache.
    for (index, flowable) in flowables.enumerated() { await flowable.update(10_000 + index) }
    for (index, subscriber) in subscribers.enumerated() {
      let final = completed(10_000 + index / 25)
      #expect(await poll(timeout: .seconds(30)) { subscriber.states.last == final })
      #expect(Self.consecutiveDuplicates(subscriber.states) == 0)
      await subscriber.stop()
    }
    for (index, flowable) in flowables.enumerated() {
      #expect(await flowable.getData(from: .cache) == 10_000 + index)
    }
  }
}

/// `combineState` over live flowables.
@Suite(.timeLimit(.minutes(1)))
struct CombineStateTests {
  @Test("combineState emits the zipped latest states of both sequences")
  func combineTwo() async throws {
    let left = AnyStoreFlowable.from(
      cacher: Repository<String, Int>(), fetcher: CountingFetcher { _ in 1 }, param: "l")
    let right = AnyStoreFlowable.from(
      cacher: Repository<String, Int>(), fetcher: CountingFetcher { _ in throw TestError("r") }, param: "r")
    await left.update(1)
    await right.update(2)
    let subscriber = LoadingStateRecorder(left.publish().combineState(right.publish()) { $0 * 10 + $1 })
    #expect(await subscriber.waitForCount(1) == [completed(12)])
    await right.refresh()
    let states = await subscriber.waitForCount(3)
    try #require(states.count >= 3)  // the wait is bounded: fewer states fail here, not out of bounds
    #expect(states[1] == .loading(content: 12))
    #expect(states[2] == .error(TestError("r"), content: 12))
    await right.update(3)
    #expect(await subscriber.waitForCount(4).last == completed(13))
    await subscriber.stop()
  }

  @Test("combineState of five sequences and mapContent")
  func combineFive() async {
    let flowables = (0..<5).map { index in
      AnyStoreFlowable.from(cacher: Repository<String, Int>(), fetcher: CountingFetcher { _ in index }, param: "x")
    }
    for (index, flowable) in flowables.enumerated() { await flowable.update(index) }
    let combined = flowables[0].publish().combineState(
      flowables[1].publish(), flowables[2].publish(), flowables[3].publish(), flowables[4].publish()
    ) { $0 + $1 + $2 + $3 + $4 }
    let subscriber = LoadingStateRecorder(combined.mapContent { $0 * 2 })
    #expect(await subscriber.waitForCount(1) == [completed(20)])
    await flowables[4].update(14)
    #expect(await subscriber.waitForCount(2).last == completed(40))
    await subscriber.stop()
  }
}
