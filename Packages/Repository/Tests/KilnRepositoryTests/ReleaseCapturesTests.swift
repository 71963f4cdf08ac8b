import Foundation
import KilnRepository
import KilnTesting
import Synchronization
import Testing

/// What a fetcher captures (a view model, say) is released when nobody needs the fetch any
/// more, not when the param's cached state is released after the release delay.
@Suite(.timeLimit(.minutes(1)))
struct ReleaseCapturesTests {
  /// Stands for what a user's fetch closure captures.
  final class ViewModel: Sendable {}

  /// A weak reference a `@Sendable` closure can read.
  final class Weak: Sendable {
    private let reference: Mutex<WeakReference>
    struct WeakReference: @unchecked Sendable { weak var value: ViewModel? }

    init(_ value: ViewModel) { reference = Mutex(WeakReference(value: value)) }
    var isReleased: Bool { reference.withLock { $0.value == nil } }
  }

  let clock = ManualClock()

  @Test("the last subscriber leaving releases the cancelled fetch's captures at once; the state waits for the delay")
  func cancelledFetchReleasesCaptures() async {
    let repository = Repository<String, Int>(clock: clock, releaseAfter: .seconds(300))
    let started = AsyncCounter()
    let weak: Weak
    do {
      let model = ViewModel()
      weak = Weak(model)
      let flowable = AnyStoreFlowable.from(
        cacher: repository,
        fetcher: AnyFetcher<String, Int> { _ in
          withExtendedLifetime(model) {}
          started.increment()
          try await Task.sleep(for: .seconds(3_600))
          return 1
        },
        param: "a")
      let subscription = Task {
        for await state in flowable.publish() { _ = state }
      }
      await started.wait(untilAtLeast: 1)
      subscription.cancel()
      await subscription.value
    }
    #expect(await poll(timeout: .seconds(30)) { weak.isReleased }, "the fetch closure outlived its cancelled fetch")
    // The param's state is still held: the release delay has not passed on the clock.
    #expect(repository.count == 1)
  }

  @Test("a flowable used only through refresh() is not kept by the param's state after it returns")
  func refreshKeepsNoFetcher() async {
    let repository = Repository<String, Int>(clock: clock, releaseAfter: .seconds(300))
    let weak: Weak
    do {
      let model = ViewModel()
      weak = Weak(model)
      let flowable = AnyStoreFlowable.from(
        cacher: repository,
        fetcher: AnyFetcher<String, Int> { _ in
          withExtendedLifetime(model) {}
          return 1
        },
        param: "a")
      await flowable.refresh()
      #expect(await flowable.getData(from: .cache) == 1)
    }
    #expect(await poll(timeout: .seconds(30)) { weak.isReleased }, "the param's state kept the fetch closure")
    #expect(repository.count == 1)
  }

  @Test("an invalidation still refetches with a subscriber's fetcher after others left")
  func invalidationUsesRemainingSubscriber() async {
    let repository = Repository<String, Int>(clock: clock)
    let calls = Mutex<[String]>([])
    func flowable(_ name: String) -> AnyStoreFlowable<Int> {
      AnyStoreFlowable.from(
        cacher: repository,
        fetcher: AnyFetcher<String, Int> { _ in
          calls.withLock { $0.append(name) }
          return 1
        },
        param: "a")
    }
    let staying = flowable("staying")
    let stays = Task { for await state in staying.publish() { _ = state } }
    #expect(await poll(timeout: .seconds(30)) { calls.withLock { $0 } == ["staying"] })
    let leaving = flowable("leaving")
    let leavingSaw = AsyncCounter()
    let leaves = Task {
      for await state in leaving.publish() {
        _ = state
        leavingSaw.increment()
      }
    }
    // The newer subscriber is registered (it saw the state) before it leaves.
    await leavingSaw.wait(untilAtLeast: 1)
    leaves.cancel()
    await leaves.value
    await repository.invalidateAll()
    #expect(await poll(timeout: .seconds(30)) { calls.withLock { $0 }.count == 2 })
    #expect(calls.withLock { $0 } == ["staying", "staying"])
    stays.cancel()
    await stays.value
  }
}
