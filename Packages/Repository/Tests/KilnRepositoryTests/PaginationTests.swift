import Foundation
import KilnRepository
import KilnRepositoryTesting
import KilnTesting
import Testing

@Suite(.timeLimit(.minutes(1)))
struct PaginationTests {
  let repository = PaginationRepository<String, Int>()

  func forward(_ pages: NumberPages, maxPages: Int? = nil) -> PaginationStoreFlowable<Int> {
    PaginationStoreFlowable.from(
      cacher: repository, fetcher: ForwardPages(base: pages), param: "list", maxPages: maxPages)
  }

  func twoWay(_ pages: NumberPages, maxPages: Int? = nil) -> PaginationStoreFlowable<Int> {
    PaginationStoreFlowable.from(cacher: repository, fetcher: pages, param: "list", maxPages: maxPages)
  }

  @Test("the first page, then next pages appended, until there is no next key")
  func nextPages() async {
    let pages = NumberPages(count: 3)
    let list = forward(pages)
    let subscriber = LoadingStateRecorder(list.publish())
    #expect(await subscriber.waitForCount(2) == [.loading(content: nil), page([0, 1], next: more)])
    #expect(await list.requestNextData() == .loaded)
    #expect(await list.requestNextData() == .loaded)
    #expect(await list.requestNextData() == .skipped(.noMoreData))
    #expect(
      await subscriber.waitForCount(6) == [
        .loading(content: nil), page([0, 1], next: more), page([0, 1], next: .loading),
        page([0, 1, 10, 11], next: more),
        page([0, 1, 10, 11], next: .loading), page([0, 1, 10, 11, 20, 21], next: noMore),
      ])
    #expect(pages.calls.values == ["first", "next:1", "next:2"])
    #expect(await list.getData(from: .cache) == [0, 1, 10, 11, 20, 21])
    await subscriber.stop()
  }

  @Test("a page window shows its paging flags whichever flowable made the param's state first")
  func pagingFlagsAreTheRepositorys() async {
    let pages = NumberPages(count: 3)
    // A plain flowable over the page window subscribes first…
    let plain = AnyStoreFlowable.from(
      cacher: repository,
      fetcher: AnyFetcher<String, PageWindow<Int>> { _ in
        PageWindow(first: .init(key: .initial, items: [0, 1], nextKey: "1", prevKey: nil))
      }, param: "list")
    let first = LoadingStateRecorder(plain.publish())
    let firstStates = await first.waitForCount(2)
    // …and still says a next page exists, as the paged flowable does.
    guard case .completed(_, let next, _)? = firstStates.last else {
      Issue.record("not completed: \(firstStates)")
      return
    }
    #expect(next == more)
    let list = forward(pages)
    let second = LoadingStateRecorder(list.publish())
    #expect(await second.waitForCount(1) == [page([0, 1], next: more)])
    #expect(await list.requestNextData() == .loaded)
    #expect(
      await second.waitForCount(3) == [
        page([0, 1], next: more), page([0, 1], next: .loading), page([0, 1, 10, 11], next: more),
      ])
    await first.stop()
    await second.stop()
  }

  @Test("a failed next page keeps the data and the key; continueWhenError decides the retry")
  func nextFailure() async {
    let pages = NumberPages(count: 3)
    let list = forward(pages)
    let subscriber = LoadingStateRecorder(list.publish())
    _ = await subscriber.waitForCount(2)
    pages.fail("next:1")
    #expect(await list.requestNextData() == .failed(TestError("next:1")))
    #expect(await subscriber.waitForCount(4).last == page([0, 1], next: .error(TestError("next:1"))))
    #expect(await list.requestNextData(continueWhenError: false) == .skipped(.previousError))
    pages.heal("next:1")
    #expect(await list.requestNextData(continueWhenError: true) == .loaded)
    #expect(await subscriber.waitForCount(6).last == page([0, 1, 10, 11], next: more))
    #expect(pages.calls.values == ["first", "next:1", "next:1"])
    await subscriber.stop()
  }

  @Test("additional requests in an error state or without content are rejected")
  func rejected() async {
    let pages = NumberPages(count: 3)
    pages.fail("first")
    let list = forward(pages)
    await list.validate()
    #expect(await list.requestNextData() == .rejected(.onErrorState))
    #expect(await list.requestPrevData() == .rejected(.onErrorState))
    pages.heal("first")
    await list.refresh()
    await list.clear()
    #expect(await list.requestNextData() == .rejected(.onNil))
    #expect(pages.calls.values == ["first", "first"])
  }

  @Test("nothing is requested while the main content loads or a next page already loads")
  func skippedWhileLoading() async throws {
    let firstGate = Gate()
    let gate = Gate()
    let pages = NumberPages(count: 3, firstGate: firstGate, gate: gate)
    let list = forward(pages)
    let refresh = Task { await list.refresh() }
    await firstGate.waitForWaiters(1)
    #expect(await list.requestNextData() == .skipped(.mainLoading))
    firstGate.open()
    await refresh.value
    let next = Task { await list.requestNextData() }
    await gate.waitForWaiters(1)
    #expect(await list.requestNextData() == .skipped(.alreadyLoading))
    gate.open()
    #expect(await next.value == .loaded)
    #expect(pages.calls.values == ["first", "next:1"])
  }

  @Test("two-way: previous pages are prepended, next and prev load at once and fail independently")
  func twoWayPaging() async {
    let gate = Gate()
    let pages = NumberPages(count: 5, start: 2, gate: gate)
    let list = twoWay(pages)
    let subscriber = LoadingStateRecorder(list.publish())
    #expect(await subscriber.waitForCount(2).last == page([20, 21], next: more, prev: more))
    pages.fail("prev:1")
    let next = Task { await list.requestNextData() }
    let prev = Task { await list.requestPrevData() }
    await gate.waitForWaiters(2)
    #expect(await subscriber.waitForCount(4).last == page([20, 21], next: .loading, prev: .loading))
    gate.open()
    #expect(await next.value == .loaded)
    #expect(await prev.value == .failed(TestError("prev:1")))
    let last = await list.publish().first { _ in true }
    #expect(last == page([20, 21, 30, 31], next: more, prev: .error(TestError("prev:1"))))
    pages.heal("prev:1")
    #expect(await list.requestPrevData() == .loaded)
    #expect(await list.requestPrevData() == .loaded)
    #expect(await list.requestPrevData() == .skipped(.noMoreData))
    #expect(await list.getData() == [0, 1, 10, 11, 20, 21, 30, 31])
    await subscriber.stop()
  }

  @Test("a page window drops the first page going forward and brings it back as a previous page")
  func windowForward() async {
    let pages = NumberPages(count: 4)
    let list = forward(pages, maxPages: 2)
    await list.validate()
    #expect(await list.requestNextData() == .loaded)
    #expect(await list.requestNextData() == .loaded)
    #expect(await list.getData() == [10, 11, 20, 21])
    let state = await list.publish().first { _ in true }
    #expect(state == page([10, 11, 20, 21], next: more, prev: more))
    #expect(await list.requestPrevData() == .loaded)
    #expect(await list.getData() == [0, 1, 10, 11])
    #expect(await list.requestPrevData() == .skipped(.noMoreData))
    #expect(await list.requestNextData() == .loaded)
    #expect(await list.getData() == [10, 11, 20, 21])
    #expect(await list.requestNextData() == .loaded)
    #expect(await list.getData() == [20, 21, 30, 31])
    #expect(await list.requestNextData() == .skipped(.noMoreData))
    #expect(pages.calls.values == ["first", "next:1", "next:2", "first", "next:2", "next:3"])
  }

  @Test("a page window drops the last page going back")
  func windowBackward() async {
    let pages = NumberPages(count: 5, start: 3)
    let list = twoWay(pages, maxPages: 2)
    await list.validate()
    #expect(await list.requestPrevData() == .loaded)
    #expect(await list.requestPrevData() == .loaded)
    #expect(await list.getData() == [10, 11, 20, 21])
    #expect(await list.requestNextData() == .loaded)
    #expect(await list.getData() == [20, 21, 30, 31])
    #expect(pages.calls.values == ["first", "prev:2", "prev:1", "first"])
  }

  @Test("refresh() starts again from the first page")
  func refreshRestarts() async {
    let pages = NumberPages(count: 4)
    let list = forward(pages)
    await list.validate()
    await list.requestNextData()
    await list.requestNextData()
    await list.refresh()
    #expect(await list.getData() == [0, 1])
    #expect(pages.calls.values == ["first", "next:1", "next:2", "first"])
  }

  @Test("refresh keeping the pages refetches each held page in order: k pages, k requests")
  func refreshKeepingPages() async {
    let pages = NumberPages(count: 5)
    let list = forward(pages, maxPages: 3)
    await list.validate()
    for _ in 0..<3 { await list.requestNextData() }
    #expect(await list.getData() == [10, 11, 20, 21, 30, 31])
    let before = pages.calls.values.count
    await list.refresh(keepingPages: true)
    #expect(Array(pages.calls.values.dropFirst(before)) == ["next:1", "next:2", "next:3"])
    #expect(await list.getData() == [10, 11, 20, 21, 30, 31])
    let state = await list.publish().first { _ in true }
    #expect(state == page([10, 11, 20, 21, 30, 31], next: more, prev: more))
  }

  @Test("a next page answered after a refresh is dropped")
  func nextPageSuperseded() async {
    let gate = Gate()
    let pages = NumberPages(count: 4, gate: gate)
    let list = forward(pages)
    await list.validate()
    let next = Task { await list.requestNextData() }
    await gate.waitForWaiters(1)
    await list.refresh()
    gate.open()
    #expect(await next.value == .superseded)
    #expect(await list.getData() == [0, 1])
  }

  @Test("update(newData:nextKey:prevKey:) replaces the list with one page")
  func updateList() async {
    let pages = NumberPages(count: 4)
    let list = twoWay(pages)
    let subscriber = LoadingStateRecorder(list.publish())
    _ = await subscriber.waitForCount(2)
    await list.update(newData: [7], nextKey: "3", prevKey: nil)
    #expect(await subscriber.waitForCount(3).last == page([7], next: more, prev: noMore))
    #expect(await list.requestNextData() == .loaded)
    #expect(await list.getData() == [7, 30, 31])
    await list.update(newData: nil)
    #expect(await subscriber.waitForCount(6).last == .loading(content: nil))
    await subscriber.stop()
  }

  @Test("a page window survives a round trip through Codable")
  func windowCodable() throws {
    let window = PageWindow(first: .init(key: .initial, items: [1, 2], nextKey: "1", prevKey: nil))
      .appending(.init(key: .next("1"), items: [3], nextKey: nil, prevKey: nil), maxPages: 1)
    let decoded = try JSONDecoder().decode(PageWindow<Int>.self, from: JSONEncoder().encode(window))
    #expect(decoded == window)
    #expect(decoded.items == [3])
    #expect(decoded.prevRequestKey == .initial)
    #expect(throws: DecodingError.self) {
      try JSONDecoder().decode(
        PageWindow<Int>.self, from: Data(#"{"pages":[],"droppedBefore":[],"droppedAfter":[]}"#.utf8))
    }
  }
}
