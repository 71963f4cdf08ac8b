import KilnTesting
import Testing

@testable import KilnQuery

@Suite("Paginator", .timeLimit(.minutes(1)), .observingFlights)
struct PaginatorTests {
  /// Ten elements per page: page `n` holds `n*10 ..< n*10 + 10`.
  private static func elements(of page: Int) -> [Int] {
    Array(page * 10..<page * 10 + 10)
  }

  @Test("concurrent load and loadMore calls share one request")
  func sharedRequest() async throws {
    let pages = Recorder<Int>()
    let network = SpyQuery<Void, any Error>(.success(()))
    network.hold()
    let paginator = Paginator(firstPage: 1) { page in
      pages.append(page)
      return network.map { Self.elements(of: page) }
    }

    let calls = [
      Task { try await paginator.load() },
      Task { try await paginator.loadMore() },
      Task { try await paginator.loadMore() },
    ]
    await FlightEvents.current.waitForJoins(3)
    #expect(await paginator.waiterCount == 3)
    #expect(await paginator.isLoading)
    network.release()

    for call in calls {
      #expect(try await call.value == Self.elements(of: 1))
    }
    #expect(pages.values == [1])
    #expect(network.loadCount == 1)
    #expect(await !paginator.isLoading)
  }

  @Test("page numbers advance from firstPage and pages accumulate")
  func pagesAdvance() async throws {
    let pages = Recorder<Int>()
    let paginator = Paginator(firstPage: 3) { page in
      pages.append(page)
      return AnyQuery<[Int], any Error> { Self.elements(of: page) }
    }
    #expect(paginator.firstPage == 3)
    #expect(await paginator.nextPage == 3)

    _ = try await paginator.loadMore()
    _ = try await paginator.loadMore()
    let all = try await paginator.loadMore()

    #expect(pages.values == [3, 4, 5])
    #expect(all == Self.elements(of: 3) + Self.elements(of: 4) + Self.elements(of: 5))
    #expect(await paginator.data == all)
    #expect(await paginator.nextPage == 6)
    #expect(await paginator.hasMore)
  }

  @Test("the default first page is 0")
  func defaultFirstPage() async throws {
    let paginator = Paginator { page in AnyQuery<[Int], any Error> { [page] } }
    #expect(try await paginator.load() == [0])
  }

  @Test("a failure keeps the data and the page, and the next call asks for that page again")
  func failureKeepsState() async throws {
    let pages = Recorder<Int>()
    let outcomes = SpyQuery<Bool, APIError>(results: [.success(true), .failure(.offline), .success(true)])
    let paginator = Paginator { page in
      pages.append(page)
      return outcomes.map { _ in Self.elements(of: page) }
    }

    _ = try await paginator.loadMore()
    let failed = await outcome { () async throws(APIError) in try await paginator.loadMore() }

    #expect(failed == .failure(.offline))
    #expect(await paginator.data == Self.elements(of: 0))
    #expect(await paginator.nextPage == 1)
    #expect(await paginator.hasMore)

    #expect(try await paginator.loadMore() == Self.elements(of: 0) + Self.elements(of: 1))
    #expect(pages.values == [0, 1, 1])
  }

  @Test("an empty page sets hasMore to false, and loadMore then asks for nothing")
  func emptyPageEnds() async throws {
    let pages = Recorder<Int>()
    let paginator = Paginator { page in
      pages.append(page)
      return AnyQuery<[Int], any Error> { page < 2 ? Self.elements(of: page) : [] }
    }
    _ = try await paginator.loadMore()
    _ = try await paginator.loadMore()
    #expect(await paginator.hasMore)

    let all = try await paginator.loadMore()
    #expect(await !paginator.hasMore)
    #expect(await paginator.nextPage == 3)
    #expect(all == Self.elements(of: 0) + Self.elements(of: 1))

    #expect(try await paginator.loadMore() == all)
    #expect(pages.values == [0, 1, 2])
  }

  @Test("load returns the loaded data without a request")
  func loadReturnsData() async throws {
    let network = SpyQuery<Void, any Error>(.success(()))
    let paginator = Paginator { page in network.map { Self.elements(of: page) } }
    let first = try await paginator.load()
    #expect(try await paginator.load() == first)
    #expect(network.loadCount == 1)
  }

  @Test("reset during an in-flight request discards that request's result")
  func resetDiscardsInFlight() async throws {
    let pages = Recorder<Int>()
    // Typed: a held spy that is cancelled still returns its scripted success, so the result
    // really arrives after the reset and must be thrown away.
    let network = SpyQuery<Void, APIError>(.success(()))
    network.hold()
    let paginator = Paginator { page in
      pages.append(page)
      return network.map { Self.elements(of: page) }
    }
    let stale = Task { await outcome { () async throws(APIError) in try await paginator.loadMore() } }
    await network.waitForLoads(1)

    await paginator.reset()
    network.release()

    #expect(await stale.value == .success([]))  // the data as it is now, without the discarded page
    await network.waitForCompletions(1)
    #expect(network.cancelledCount == 1)
    #expect(await paginator.data.isEmpty)
    #expect(await paginator.nextPage == 0)
    #expect(await paginator.hasMore)
    #expect(await !paginator.isLoading)

    #expect(try await paginator.loadMore() == Self.elements(of: 0))
    #expect(pages.values == [0, 0])
  }

  @Test("reset forgets the pages and starts over from firstPage")
  func resetStartsOver() async throws {
    let paginator = Paginator(firstPage: 1) { page in AnyQuery<[Int], any Error> { Self.elements(of: page) } }
    _ = try await paginator.loadMore()
    _ = try await paginator.loadMore()
    await paginator.reset()
    #expect(await paginator.data.isEmpty)
    #expect(await paginator.nextPage == 1)
    #expect(try await paginator.refresh() == Self.elements(of: 1))
  }

  @Test("cancelling one caller leaves the request running; cancelling all cancels it and keeps the data")
  func cancellation() async throws {
    let network = SpyQuery<Void, any Error>(.success(()))
    let paginator = Paginator { page in network.map { Self.elements(of: page) } }
    _ = try await paginator.loadMore()
    network.hold()

    let first = Task { try await paginator.loadMore() }
    let second = Task { try await paginator.loadMore() }
    await FlightEvents.current.waitForJoins(3)
    #expect(await paginator.waiterCount == 2)
    first.cancel()
    await #expect(throws: CancellationError.self) { try await first.value }
    #expect(network.cancelledCount == 0)

    second.cancel()
    await #expect(throws: CancellationError.self) { try await second.value }
    await network.waitForCompletions(2)
    #expect(network.cancelledCount == 1)
    await FlightEvents.current.waitForEnds(2)
    #expect(await !paginator.isLoading)
    #expect(await paginator.data == Self.elements(of: 0))
    #expect(await paginator.nextPage == 1)
  }

  /// A paginator whose page queries ignore cancellation: they end when `source` finishes.
  private static func stubbornPaginator(
    _ source: StubbornQuery,
    pages: Recorder<Int>
  ) -> Paginator<Int, any Error> {
    Paginator { page in
      pages.append(page)
      return AnyQuery<[Int], any Error> {
        _ = await source.load()
        return elements(of: page)
      }
    }
  }

  @Test("after every caller gave up on a request that runs on, the next waits for it and asks for the page again")
  func nextRequestWaitsForAbandonedRequest() async throws {
    let source = StubbornQuery(value: 0)
    let pages = Recorder<Int>()
    let paginator = Self.stubbornPaginator(source, pages: pages)
    await source.abandonLoad { try await paginator.loadMore() }

    let next = Task { try await paginator.loadMore() }
    await FlightEvents.current.waitForStarts(2)
    #expect(await paginator.waitsForAbandonedRequest)
    #expect(source.loadCount == 1)  // one request at a time

    source.finish()
    #expect(try await next.value == Self.elements(of: 0))
    #expect(pages.values == [0, 0])
    #expect(source.events.values == ["start", "end", "start", "end"])
    #expect(await paginator.nextPage == 1)
    #expect(await !paginator.isLoading)
  }

  @Test("a request after reset waits for the discarded request that runs on")
  func requestAfterResetWaitsForDiscardedRequest() async throws {
    let source = StubbornQuery(value: 0)
    let pages = Recorder<Int>()
    let paginator = Self.stubbornPaginator(source, pages: pages)
    let discarded = Task { try await paginator.loadMore() }
    await source.waitForLoads(1)
    await paginator.reset()

    let fresh = Task { try await paginator.loadMore() }
    await FlightEvents.current.waitForStarts(2)
    #expect(await paginator.waitsForAbandonedRequest)
    #expect(source.loadCount == 1)
    #expect(await paginator.isLoading)

    source.finish()
    #expect(try await discarded.value == [])  // the data when it ended: reset, nothing new yet
    #expect(try await fresh.value == Self.elements(of: 0))
    #expect(pages.values == [0, 0])
    #expect(source.events.values == ["start", "end", "start", "end"])
  }
}
