/// A single source of truth for a paginated list: the loading state of its held pages, and
/// requests for the next and previous pages.
///
/// ```swift
/// let repos = PaginationStoreFlowable.from(cacher: PaginationRepository<UnitParam, Repo>(),
///                                          fetcher: RepoFetcher(), param: UnitParam(), maxPages: 5)
/// Task { for await state in repos.publish() { render(state) } }
/// await repos.requestNextData()
/// ```
///
/// The completed state's `next` and `prev` tell whether another page exists in each
/// direction, loads, or failed (the content and the key are kept). Next and previous
/// requests are independent: both can load at once.
///
/// It is a ``StoreFlowable`` of the held elements, so code written for any flowable (a view
/// that renders `publish()`, a pull-to-refresh calling `refresh()`) takes a paged list too:
///
/// ```swift
/// func reload<F: StoreFlowable>(_ flowable: F) async { await flowable.refresh() }
/// await reload(repos)
/// ```
public struct PaginationStoreFlowable<Element: Sendable>: StoreFlowable {
  private let base: any PaginationHandling<Element>

  private init(_ base: any PaginationHandling<Element>) {
    self.base = base
  }

  /// Makes a flowable paging forward with `fetcher`.
  ///
  /// - Parameters:
  ///   - cacher: The repository: keeps the page window and the shared states.
  ///   - fetcher: Fetches pages.
  ///   - param: Which list.
  ///   - maxPages: The most pages held; `nil` (the default) for no limit.
  public static func from<F: PaginationFetcher>(
    cacher: PaginationRepository<F.Param, Element>, fetcher: F, param: F.Param, maxPages: Int? = nil
  ) -> PaginationStoreFlowable where F.Element == Element {
    precondition(maxPages.map { $0 > 0 } ?? true, "maxPages must be positive")
    return PaginationStoreFlowable(
      PaginationHandle(
        repository: cacher, param: param, maxPages: maxPages,
        first: { try await fetcher.fetch(param: $0) },
        next: { try await fetcher.fetchNext(nextKey: $0, param: $1) },
        prev: nil))
  }

  /// Makes a flowable paging both ways with `fetcher`.
  public static func from<F: TwoWayPaginationFetcher>(
    cacher: PaginationRepository<F.Param, Element>, fetcher: F, param: F.Param, maxPages: Int? = nil
  ) -> PaginationStoreFlowable where F.Element == Element {
    precondition(maxPages.map { $0 > 0 } ?? true, "maxPages must be positive")
    return PaginationStoreFlowable(
      PaginationHandle(
        repository: cacher, param: param, maxPages: maxPages,
        first: { try await fetcher.fetch(param: $0) },
        next: { try await fetcher.fetchNext(nextKey: $0, param: $1) },
        prev: { try await fetcher.fetchPrev(prevKey: $0, param: $1) }))
  }

  /// The loading state of the held elements (see ``StoreFlowable/publish(forceRefresh:)``).
  public func publish(forceRefresh: Bool) -> LoadingStateSequence<[Element]> {
    publishWindow(forceRefresh: forceRefresh).mapContent(\.items)
  }

  /// The loading state of the page window itself.
  public func publishWindow(forceRefresh: Bool = false) -> LoadingStateSequence<PageWindow<Element>> {
    base.publish(forceRefresh: forceRefresh)
  }

  /// The held elements from where `from` says (see ``StoreFlowable/requireData(from:)``).
  public func requireData(from: GettingFrom) async throws -> [Element] {
    try await base.requireData(from: from).items
  }

  /// Fetches the first page when the cache is empty, expired or invalidated.
  public func validate() async {
    await base.validate()
  }

  /// Starts again from the first page (dropping the others).
  public func refresh() async {
    await base.refresh(keepingPages: false)
  }

  /// Refetches the held pages one after another, in order (k pages, k requests), and
  /// replaces them at once; with `keepingPages: false`, the same as ``refresh()``.
  public func refresh(keepingPages: Bool) async {
    await base.refresh(keepingPages: keepingPages)
  }

  /// Replaces the list with one page of `newData` and no keys (`nil` removes it): the
  /// ``StoreFlowable`` requirement, the same as ``update(newData:nextKey:prevKey:)``.
  public func update(_ newData: [Element]?) async {
    await update(newData: newData)
  }

  /// Replaces the list with one page of `newData` (`nil` removes it).
  public func update(newData: [Element]?, nextKey: String? = nil, prevKey: String? = nil) async {
    await base.update(
      newData.map { PageWindow(first: .init(key: .initial, items: $0, nextKey: nextKey, prevKey: prevKey)) })
  }

  /// Removes the list from the cache; the state becomes `.loading(content: nil)`.
  public func clear() async {
    await base.update(nil)
  }

  /// Loads the next page and appends it.
  ///
  /// Nothing happens while the main state loads, when there is no next key, or while a next
  /// page loads; a next page that failed is retried only when `continueWhenError`. In an
  /// error state or without content the request is rejected. A failure keeps the content
  /// and the key, and the completed state's `next` becomes `.error`.
  ///
  /// - Parameter continueWhenError: Retry after a failed next page (the default).
  /// - Returns: What the request did.
  @discardableResult
  public func requestNextData(continueWhenError: Bool = true) async -> AdditionalRequestResult {
    await base.requestAdditional(.next, continueWhenError: continueWhenError)
  }

  /// Loads the previous page and prepends it (mirrors ``requestNextData(continueWhenError:)``).
  /// With a one-way fetcher, only pages the window dropped can be loaded back.
  @discardableResult
  public func requestPrevData(continueWhenError: Bool = true) async -> AdditionalRequestResult {
    await base.requestAdditional(.prev, continueWhenError: continueWhenError)
  }
}

private protocol PaginationHandling<Element>: Sendable {
  associatedtype Element: Sendable
  func publish(forceRefresh: Bool) -> LoadingStateSequence<PageWindow<Element>>
  func requireData(from: GettingFrom) async throws -> PageWindow<Element>
  func validate() async
  func refresh(keepingPages: Bool) async
  func update(_ window: PageWindow<Element>?) async
  func requestAdditional(
    _ direction: PageDirection, continueWhenError: Bool
  ) async -> AdditionalRequestResult
}

private struct PaginationHandle<Param: Hashable & Sendable, Element: Sendable>: PaginationHandling {
  typealias Window = PageWindow<Element>
  typealias FetchPage = @Sendable (String, Param) async throws -> PaginationResult<Element>

  let handle: FlowHandle<Param, Window>
  let maxPages: Int?
  let first: @Sendable (Param) async throws -> PaginationResult<Element>
  let next: FetchPage
  let prev: FetchPage?

  init(
    repository: Repository<Param, Window>, param: Param, maxPages: Int?,
    first: @escaping @Sendable (Param) async throws -> PaginationResult<Element>,
    next: @escaping FetchPage, prev: FetchPage?
  ) {
    self.maxPages = maxPages
    self.first = first
    self.next = next
    self.prev = prev
    handle = FlowHandle(source: repository.source, registry: repository.flows, param: param) { param, _ in
      let result = try await first(param)
      return Window(first: .init(key: .initial, items: result.data, nextKey: result.nextKey, prevKey: result.prevKey))
    }
  }

  func fetchPage(_ key: PageKey, param: Param) async throws -> Window.Page {
    let result: PaginationResult<Element>
    switch key {
    case .initial: result = try await first(param)
    case .next(let nextKey): result = try await next(nextKey, param)
    case .prev(let prevKey):
      guard let prev else { throw PaginationError.noPreviousPageFetcher }
      result = try await prev(prevKey, param)
    }
    return Window.Page(key: key, items: result.data, nextKey: result.nextKey, prevKey: result.prevKey)
  }

  func publish(forceRefresh: Bool) -> LoadingStateSequence<Window> {
    handle.publish(forceRefresh: forceRefresh)
  }

  func requireData(from: GettingFrom) async throws -> Window {
    try await handle.requireData(from: from)
  }

  func validate() async {
    await handle.validate()
  }

  func refresh(keepingPages: Bool) async {
    guard keepingPages else { return await handle.refresh() }
    let fetchPage = self.fetchPage
    _ = await handle.withCoordinator { coordinator in
      await coordinator.refresh { param, current in
        guard let current else {
          return Window(first: try await fetchPage(.initial, param))
        }
        var pages: [Window.Page] = []
        for page in current.pages {
          pages.append(try await fetchPage(page.key, param))
        }
        return current.replacingPages(pages)
      }
    }
  }

  func update(_ window: Window?) async {
    await handle.update(window)
  }

  func requestAdditional(
    _ direction: PageDirection, continueWhenError: Bool
  ) async -> AdditionalRequestResult {
    let maxPages = self.maxPages
    let fetchPage = self.fetchPage
    let param = handle.param
    return await handle.withCoordinator { coordinator in
      switch direction {
      case .next:
        return await coordinator.requestAdditional(.next, continueWhenError: continueWhenError) { window in
          guard let key = window.nextRequestKey else { return nil }
          return {
            let page = try await fetchPage(key, param)
            return { latest in latest.nextRequestKey == key ? latest.appending(page, maxPages: maxPages) : nil }
          }
        }
      case .prev:
        return await coordinator.requestAdditional(.prev, continueWhenError: continueWhenError) { window in
          guard let key = window.prevRequestKey else { return nil }
          return {
            let page = try await fetchPage(key, param)
            return { latest in latest.prevRequestKey == key ? latest.prepending(page, maxPages: maxPages) : nil }
          }
        }
      }
    }
  }
}

/// A pagination request that cannot be made.
public enum PaginationError: Error, Hashable, Sendable {
  /// A previous page was requested by key from a fetcher that only pages forward.
  case noPreviousPageFetcher
}
