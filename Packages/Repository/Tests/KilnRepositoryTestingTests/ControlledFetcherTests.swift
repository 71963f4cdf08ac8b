import KilnRepository
import KilnRepositoryTesting
import KilnTesting
import Testing

@Suite(.timeLimit(.minutes(1)))
struct ControlledFetcherTests {
  @Test("calls are numbered as they arrive and answered when the test says, in any order")
  func answersInAnyOrder() async throws {
    let fetcher = ControlledFetcher<String, Int>()
    let first = Task { try await fetcher.fetch(param: "a") }
    #expect(await fetcher.waitForCall(0))
    let second = Task { try await fetcher.fetch(param: "b") }
    #expect(await fetcher.waitForCall(1))
    #expect(fetcher.params == ["a", "b"])
    fetcher.succeed(1, with: 2)
    #expect(try await second.value == 2)
    #expect(fetcher.endedCount == 1)
    fetcher.fail(0, with: TestError("down"))
    await #expect(throws: TestError("down")) { try await first.value }
    #expect(fetcher.callCount == 2)
    #expect(fetcher.endedCount == 2)
    #expect(fetcher.cancelledCount == 0)
  }

  @Test("an answer given before its call arrives is returned as soon as it does")
  func answerBeforeTheCall() async throws {
    let fetcher = ControlledFetcher<Int, String>()
    fetcher.succeed(1, with: "second")
    fetcher.answer(0, with: .success("first"))
    #expect(try await fetcher.fetch(param: 10) == "first")
    #expect(try await fetcher.fetch(param: 20) == "second")
    #expect(fetcher.params == [10, 20])
  }

  @Test("a call keeps its first answer")
  func firstAnswerWins() async throws {
    let fetcher = ControlledFetcher<String, Int>()
    fetcher.succeed(0, with: 1)
    fetcher.fail(0, with: TestError("late"))
    #expect(try await fetcher.fetch(param: "a") == 1)
  }

  @Test("a waiting call whose task is cancelled ends with CancellationError and counts as cancelled")
  func cancelledWhileWaiting() async throws {
    let fetcher = ControlledFetcher<String, Int>()
    let call = Task { try await fetcher.fetch(param: "a") }
    await fetcher.waitForCall(0)
    call.cancel()
    // Bounded first: a call deaf to its cancellation would hang `call.value` past any time limit.
    try #require(await fetcher.waitForCancelledCalls(1, timeout: .seconds(10)))
    await #expect(throws: CancellationError.self) { try await call.value }
    #expect(fetcher.cancelledCount == 1)
    #expect(fetcher.endedCount == 1)
    // A late answer changes nothing.
    fetcher.succeed(0, with: 1)
    #expect(fetcher.cancelledCount == 1)
  }

  @Test("a call made by a task already cancelled ends at once with CancellationError")
  func cancelledBeforeTheCall() async throws {
    let fetcher = ControlledFetcher<String, Int>()
    let gate = Gate()
    let call = Task {
      try? await gate.wait()  // ends with CancellationError once the task is cancelled
      return try await fetcher.fetch(param: "a")
    }
    call.cancel()
    try #require(await fetcher.waitForCancelledCalls(1, timeout: .seconds(10)))
    await #expect(throws: CancellationError.self) { try await call.value }
    #expect(fetcher.params == ["a"])
  }

  @Test("as a repository's fetcher, directly or through its closure")
  func inARepository() async {
    let fetcher = ControlledFetcher<String, Int>()
    let repository = Repository<String, Int>()
    for (index, flowable) in [
      AnyStoreFlowable.from(cacher: repository, fetcher: fetcher, param: "a"),
      AnyStoreFlowable.from(cacher: repository, fetcher: AnyFetcher(fetcher.closure), param: "b"),
    ].enumerated() {
      let states = LoadingStateRecorder(flowable.publish())
      #expect(await fetcher.waitForCall(index))
      fetcher.succeed(index, with: 7 + index)
      #expect(await states.waitForCount(2).map(\.content) == [nil, 7 + index])
      await states.stop()
    }
    #expect(fetcher.params == ["a", "b"])
  }

  @Test("the repository cancelling a fetch nobody waits for shows as a cancelled call")
  func abandonedFetch() async {
    let fetcher = ControlledFetcher<String, Int>()
    let flowable = AnyStoreFlowable.from(
      cacher: Repository<String, Int>(clock: ManualClock()), fetcher: fetcher, param: "a")
    let states = LoadingStateRecorder(flowable.publish())
    await fetcher.waitForCall(0)
    await states.stop()
    #expect(await fetcher.waitForCancelledCalls(1))
    #expect(fetcher.endedCount == 1)
  }

  @Test("a wait that runs out records an issue where the test waited, and returns false")
  func boundedWaits() async {
    let fetcher = ControlledFetcher<String, Int>(timeout: .milliseconds(20))
    var results: [Bool] = []
    let line = #line + 2
    await withKnownIssue {
      results.append(await fetcher.waitForCall(0))
      results.append(await fetcher.waitForEndedCalls(1, timeout: .milliseconds(10)))
      results.append(await fetcher.waitForCancelledCalls(1))
    } matching: { issue in
      issue.sourceLocation?.fileID == #fileID && (line...line + 2).contains(issue.sourceLocation?.line ?? 0)
        && issue.comments.contains { $0.rawValue.contains("ControlledFetcher") }
    }
    #expect(results == [false, false, false])
  }

  @Test("a wait that is met records no issue")
  func metWaitsRecordNothing() async throws {
    let fetcher = ControlledFetcher<String, Int>(timeout: .milliseconds(1))
    fetcher.succeed(0, with: 1)
    _ = try await fetcher.fetch(param: "a")
    // Already met: no timeout can run out, however short.
    #expect(await fetcher.waitForCall(0))
    #expect(await fetcher.waitForEndedCalls(1))
    #expect(await fetcher.waitForCancelledCalls(0))
  }
}

@Suite(.timeLimit(.minutes(1)))
struct ControlledPaginationFetcherTests {
  @Test("first, next and previous pages are calls of one sequence, answered when the test says")
  func pagesBothWays() async throws {
    let pages = ControlledPaginationFetcher<String, Int>()
    let list = PaginationStoreFlowable.from(cacher: PaginationRepository<String, Int>(), fetcher: pages, param: "l")
    let validate = Task { await list.validate() }
    #expect(await pages.waitForCall(0))
    #expect(pages.requests == [.first(param: "l")])
    pages.succeed(0, with: PaginationResult(data: [20], nextKey: "3", prevKey: "1"))
    await validate.value
    let next = Task { await list.requestNextData() }
    let prev = Task { await list.requestPrevData() }
    #expect(await pages.waitForCall(2))
    let nextCall = try #require(pages.requests.firstIndex(of: .next(key: "3", param: "l")))
    let prevCall = try #require(pages.requests.firstIndex(of: .prev(key: "1", param: "l")))
    pages.fail(prevCall, with: TestError("prev"))
    #expect(await prev.value == .failed(TestError("prev")))
    pages.succeed(nextCall, with: PaginationResult(data: [30], nextKey: nil, prevKey: "2"))
    #expect(await next.value == .loaded)
    #expect(await list.getData() == [20, 30])
    #expect(pages.callCount == 3)
    #expect(pages.endedCount == 3)
  }

  @Test("a cancelled page request ends with CancellationError and counts as cancelled")
  func cancelledPage() async throws {
    let pages = ControlledPaginationFetcher<String, Int>()
    let call = Task { try await pages.fetchNext(nextKey: "2", param: "l") }
    await pages.waitForCall(0)
    call.cancel()
    try #require(await pages.waitForCancelledCalls(1, timeout: .seconds(10)))
    await #expect(throws: CancellationError.self) { try await call.value }
    #expect(pages.requests == [.next(key: "2", param: "l")])
  }

  @Test("a wait that runs out records an issue and returns false")
  func boundedWait() async {
    let pages = ControlledPaginationFetcher<String, Int>(timeout: .milliseconds(20))
    var started = true
    await withKnownIssue {
      started = await pages.waitForCall(0)
    } matching: { issue in
      issue.comments.contains { $0.rawValue.contains("Call 0 of the ControlledPaginationFetcher did not start") }
    }
    #expect(!started)
  }
}
