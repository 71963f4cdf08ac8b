import KilnRepository
import KilnRepositoryTesting
import KilnTesting
import Testing

/// Completed with no more pages either way.
private func completed(_ content: Int) -> LoadingState<Int> {
  .completed(
    content: content, next: .fixed(canRequestAdditionalData: false), prev: .fixed(canRequestAdditionalData: false))
}

@Suite(.timeLimit(.minutes(1)))
struct LoadingStateRecorderTests {
  let fetcher = ControlledFetcher<String, Int>()
  let flowable: AnyStoreFlowable<Int>

  init() {
    flowable = AnyStoreFlowable.from(cacher: Repository<String, Int>(), fetcher: fetcher, param: "a")
  }

  @Test("keeps every state in order, with its origin, and reads them out whole")
  func recordsInOrder() async {
    let states = LoadingStateRecorder(flowable.publish())
    await fetcher.waitForCall(0)
    fetcher.succeed(0, with: 7)
    #expect(await states.waitForCount(2) == [.loading(content: nil), completed(7)])
    await flowable.update(8)
    #expect(await states.waitForCount(3) == [.loading(content: nil), completed(7), completed(8)])
    #expect(states.snapshots.map(\.origin) == [nil, .fetcher, .update])
    #expect(states.count == 3)
    await states.stop()
  }

  @Test("waitForCount returns every state seen, not only the first ones")
  func waitForCountReturnsAll() async {
    await flowable.update(1)
    await flowable.update(2)
    let states = LoadingStateRecorder(flowable.publish())
    _ = await states.waitForCount(1)  // subscribed (the subscription starts in a task of its own)
    await flowable.update(3)
    await flowable.update(4)
    _ = await states.waitForState { $0 == completed(4) }
    #expect(await states.waitForCount(1) == [completed(2), completed(3), completed(4)])
    await states.stop()
  }

  @Test("waitForState returns the first matching state, seen before the wait or after it")
  func waitForState() async {
    let states = LoadingStateRecorder(flowable.publish())
    #expect(await states.waitForState { $0.isLoading } == .loading(content: nil))
    let completion = Task { await states.waitForState { $0.content != nil } }
    await fetcher.waitForCall(0)
    fetcher.succeed(0, with: 5)
    #expect(await completion.value == completed(5))
    #expect(await states.waitForState { $0.content == 5 } == completed(5))
    await states.stop()
  }

  @Test("a wait that runs out records an issue where the test waited and returns what was seen")
  func boundedWaits() async {
    await flowable.update(1)
    let states = LoadingStateRecorder(flowable.publish(), timeout: .milliseconds(20))
    _ = await states.waitForState { $0 == completed(1) }
    var seen: [LoadingState<Int>] = []
    var match: LoadingState<Int>? = completed(0)
    let line = #line + 2
    await withKnownIssue {
      seen = await states.waitForCount(2)
      match = await states.waitForState(timeout: .milliseconds(10)) { $0.error != nil }
    } matching: { issue in
      issue.sourceLocation?.fileID == #fileID && (line...line + 1).contains(issue.sourceLocation?.line ?? 0)
        && issue.comments.contains { $0.rawValue.contains("LoadingStateRecorder saw") }
    }
    #expect(seen == [completed(1)])
    #expect(match == nil)
    await states.stop()
  }

  @Test("stop() cancels the subscription, waits for it to end, and keeps the states")
  func stopCancels() async {
    let terminated = AsyncCounter()
    let (stream, continuation) = AsyncStream<LoadingState<Int>>.makeStream()
    continuation.onTermination = { _ in terminated.increment() }
    continuation.yield(.loading(content: nil))
    let states = LoadingStateRecorder(LoadingStateSequence(stream))
    #expect(await states.waitForCount(1) == [.loading(content: nil)])
    #expect(!states.hasEnded)
    await states.stop()
    #expect(states.hasEnded)
    #expect(terminated.value == 1)
    continuation.yield(completed(1))
    #expect(states.states == [.loading(content: nil)])
    await states.stop()  // harmless
  }

  @Test("a recorder that goes away cancels its subscription")
  func deinitCancels() async {
    let terminated = AsyncCounter()
    let (stream, continuation) = AsyncStream<LoadingState<Int>>.makeStream()
    continuation.onTermination = { _ in terminated.increment() }
    continuation.yield(.loading(content: nil))
    var states: LoadingStateRecorder<Int>? = LoadingStateRecorder(LoadingStateSequence(stream))
    _ = await states?.waitForCount(1)
    states = nil
    #expect(await poll(timeout: .seconds(30)) { terminated.value == 1 })
  }

  @Test("a repository's subscription ends when its recorder goes away: the fetch nobody waits for is cancelled")
  func deinitLeavesTheRepository() async {
    let fetcher = ControlledFetcher<String, Int>()
    let flowable = AnyStoreFlowable.from(
      cacher: Repository<String, Int>(clock: ManualClock()), fetcher: fetcher, param: "a")
    var states: LoadingStateRecorder<Int>? = LoadingStateRecorder(flowable.publish())
    await fetcher.waitForCall(0)
    _ = await states?.waitForCount(1)
    states = nil
    #expect(await fetcher.waitForCancelledCalls(1))
  }
}
