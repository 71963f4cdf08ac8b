import KilnRepository
import KilnTesting
import Synchronization
import Testing

/// Plain and paged flowables through one protocol: generic code over `StoreFlowable` drives both.
@Suite(.timeLimit(.minutes(1)))
struct FlowableProtocolTests {
  /// Pages of two numbers: page `i` holds `[10 i, 10 i + 1]`; `fetch` counts first pages.
  final class Pages: PaginationFetcher, Sendable {
    let firstPages = Mutex(0)

    func fetch(param: UnitParam) async throws -> PaginationResult<Int> {
      firstPages.withLock { $0 += 1 }
      return PaginationResult(data: [0, 1], nextKey: "1")
    }

    func fetchNext(nextKey: String, param: UnitParam) async throws -> PaginationResult<Int> {
      let index = Int(nextKey)!
      return PaginationResult(data: [index * 10, index * 10 + 1], nextKey: index < 3 ? String(index + 1) : nil)
    }
  }

  /// Written once for any flowable of a list: validate, read, write, refresh, clear.
  func exercise<F: StoreFlowable<[Int]>>(_ flowable: F, refetched: () -> Int) async throws -> [String] {
    var log: [String] = []
    await flowable.validate()
    log.append("valid \(try await flowable.requireData())")
    await flowable.update([7])
    log.append("updated \(await flowable.getData(from: .cache) ?? [])")
    let before = refetched()
    await flowable.refresh()
    log.append("refreshed \(await flowable.getData(from: .cache) ?? []) with \(refetched() - before) fetch")
    await flowable.clear()
    log.append("cleared \(String(describing: await flowable.getData(from: .cache)))")
    var iterator = flowable.publish().makeAsyncIterator()
    log.append("first state after clear: loading \(await iterator.next()?.isLoading == true)")
    return log
  }

  @Test("one generic function drives a plain flowable and a paged one alike")
  func genericOverBoth() async throws {
    let plainFetches = Mutex(0)
    let plain = AnyStoreFlowable.from(
      cacher: Repository<UnitParam, [Int]>(),
      fetcher: AnyFetcher<UnitParam, [Int]> { _ in
        plainFetches.withLock { $0 += 1 }
        return [0, 1]
      })
    let pages = Pages()
    let paged = PaginationStoreFlowable.from(
      cacher: Repository<UnitParam, PageWindow<Int>>(), fetcher: pages, param: UnitParam())
    let expected = [
      "valid [0, 1]", "updated [7]", "refreshed [0, 1] with 1 fetch", "cleared nil",
      "first state after clear: loading true",
    ]
    #expect(try await exercise(plain) { plainFetches.withLock { $0 } } == expected)
    #expect(try await exercise(paged) { pages.firstPages.withLock { $0 } } == expected)
  }

  @Test("a paged flowable's update(_:) is one page without keys, as update(newData:)")
  func pagedUpdate() async throws {
    let paged = PaginationStoreFlowable.from(
      cacher: Repository<UnitParam, PageWindow<Int>>(), fetcher: Pages(), param: UnitParam())
    await paged.update([5, 6])
    let window = try #require(await paged.publishWindow().first { _ in true }?.content)
    #expect(window.pages.count == 1)
    #expect(window.items == [5, 6])
    #expect(window.pages[0].nextKey == nil && window.pages[0].prevKey == nil)
    #expect(await paged.requestNextData() == .skipped(.noMoreData))
  }
}
