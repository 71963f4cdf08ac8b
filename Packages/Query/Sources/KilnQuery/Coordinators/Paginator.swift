/// Loads a list page by page, accumulating the pages, with one request in flight at a time.
///
/// ```swift
/// let feed = Paginator(firstPage: 1) { page in ArticlesQuery(page: page) }
///
/// let first = try await feed.load()        // page 1
/// let more = try await feed.loadMore()     // pages 1 and 2
/// if await !feed.hasMore { hideSpinner() }
/// await feed.reset()                        // back to page 1, nothing loaded
/// ```
///
/// - **One request at a time**: concurrent ``load()`` and ``loadMore()`` calls share the
///   request in flight and all get its outcome.
/// - **Pages advance from `firstPage`**: a successful page is appended to ``data``, the next
///   page number goes up by one, and an empty page sets ``hasMore`` to `false`.
/// - **Failures keep everything**: ``data`` and the page number stay as they were, so the next
///   ``loadMore()`` asks for the same page again.
/// - **Reset discards what is in flight**: after ``reset()`` the result of a request that was
///   running is never applied; that request is cancelled.
///
/// A cancelled caller stops waiting (with `CancellationError` when `Failure` can hold one);
/// the request is cancelled only when every caller waiting for it has been.
///
/// A request that was cancelled — by its callers or by ``reset()`` — but ignores its
/// cancellation still counts as in flight: the next request starts once it has ended, and
/// its result is not applied.
public actor Paginator<Element: Sendable, Failure: Error> {
  private typealias Request = Flight<[Element], Failure>

  /// The number of the page loaded first, and again after ``reset()``.
  public nonisolated let firstPage: Int

  private let loadPage: @Sendable (Int) async -> Result<[Element], Failure>

  /// Every element loaded so far, pages in order.
  public private(set) var data: [Element] = []

  /// The number of the page the next ``loadMore()`` asks for.
  public private(set) var nextPage: Int

  /// Whether another page may exist: `false` once a page came back empty.
  public private(set) var hasMore = true

  /// The request whose result will be applied; `nil` after ``reset()`` or once it ended.
  private var request: Request?

  /// The request started last, kept until it ends — also once ``reset()`` discarded it — so
  /// that the next one starts only after it.
  private var latest: Request?

  /// Creates a paginator that builds the query of each page with `page`.
  ///
  /// - Parameters:
  ///   - firstPage: The number of the first page; 0 by default.
  ///   - page: Builds the query that loads the page with a given number.
  public init<Page: Query>(
    firstPage: Int = 0,
    _ page: @escaping @Sendable (_ number: Int) -> Page
  ) where Page.Success == [Element], Page.Failure == Failure {
    self.firstPage = firstPage
    self.nextPage = firstPage
    self.loadPage = { number in await page(number).result() }
  }

  /// Whether a request is in flight whose result will be applied.
  public var isLoading: Bool {
    guard let request else { return false }
    return !request.hasEnded
  }

  /// The number of callers waiting for the request in flight.
  var waiterCount: Int {
    request?.waiterCount ?? 0
  }

  /// Whether the request in flight waits for an abandoned or discarded request, still
  /// running, to end before it runs.
  var waitsForAbandonedRequest: Bool {
    request?.waitsForPredecessor ?? false
  }

  /// Returns the loaded elements, or loads the first page when nothing is loaded yet.
  ///
  /// - Returns: ``data`` at once when it is not empty; otherwise the outcome of
  ///   ``loadMore()``.
  /// - Throws: The page query's failure.
  public func load() async throws(Failure) -> [Element] {
    if !data.isEmpty { return data }
    return try await loadMore()
  }

  /// Loads the next page and appends it, sharing the request already in flight if there is
  /// one.
  ///
  /// - Returns: Every element loaded so far, the new page included. ``data`` at once when
  ///   ``hasMore`` is `false`. A caller whose request was discarded by ``reset()`` gets the
  ///   data as it is when that request ends, without the discarded page.
  /// - Throws: The page query's failure; ``data`` and ``nextPage`` are then unchanged.
  public func loadMore() async throws(Failure) -> [Element] {
    guard hasMore else { return data }
    let admission = Request.admit(to: request)
    if admission.isNew {
      // The latest request — abandoned, or discarded by `reset()` — may still be running: the
      // new one waits for it to end, and its result is not applied.
      let predecessor = latest
      let flight = admission.flight
      request = flight
      latest = flight
      let page = nextPage
      let loadPage = loadPage
      flight.start(after: predecessor) { [weak flight] in
        let result = await loadPage(page)
        return await self.complete(flight, page: page, with: result)
      }
    }
    return try await admission.flight.wait(admission.slot).get()
  }

  /// Forgets every loaded page and goes back to ``firstPage``.
  ///
  /// A request in flight is cancelled and its result discarded: it is never applied to the
  /// fresh state.
  public func reset() {
    request?.cancel()
    request = nil
    data = []
    nextPage = firstPage
    hasMore = true
  }

  /// Resets, then loads the first page again.
  ///
  /// - Returns: The elements of the first page.
  /// - Throws: The page query's failure.
  public func refresh() async throws(Failure) -> [Element] {
    reset()
    return try await loadMore()
  }

  private func complete(
    _ flight: Request?,
    page: Int,
    with result: Result<[Element], Failure>
  ) -> Result<[Element], Failure> {
    if let flight, flight === latest { latest = nil }
    guard let flight, flight === request else {
      // Discarded by reset() (or superseded after every caller gave up on it).
      return result.map { _ in data }
    }
    request = nil
    guard case .success(let elements) = result else { return result }
    data.append(contentsOf: elements)
    nextPage = page + 1
    hasMore = !elements.isEmpty
    return .success(data)
  }
}
