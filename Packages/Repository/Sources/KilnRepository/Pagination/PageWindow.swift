/// The pages of a paginated list that are held, in order, and how to reach the ones that
/// are not: the content a pagination cacher stores.
///
/// A window with `maxPages` drops its first page when paging forward past the limit (it
/// becomes reachable again as the previous page) and its last page when paging back.
public struct PageWindow<Element: Sendable>: Sendable {
  /// One held page.
  public struct Page: Sendable {
    /// How the page was requested (refetching it uses the same key).
    public var key: PageKey
    /// Its elements.
    public var items: [Element]
    /// The key of the page after it, as the fetcher returned it.
    public var nextKey: String?
    /// The key of the page before it, as the fetcher returned it.
    public var prevKey: String?

    /// Creates a page.
    public init(key: PageKey, items: [Element], nextKey: String?, prevKey: String?) {
      self.key = key
      self.items = items
      self.nextKey = nextKey
      self.prevKey = prevKey
    }
  }

  /// The held pages, first to last; never empty.
  public private(set) var pages: [Page]
  /// Every held element, in order.
  public private(set) var items: [Element]
  /// Keys of pages dropped from the front, the nearest last.
  public private(set) var droppedBefore: [PageKey]
  /// Keys of pages dropped from the back, the nearest last.
  public private(set) var droppedAfter: [PageKey]

  /// A window holding `first`.
  public init(first: Page) {
    self.init(pages: [first], droppedBefore: [], droppedAfter: [])
  }

  /// A window holding `pages` (at least one), with the keys of the pages dropped around them.
  public init(pages: [Page], droppedBefore: [PageKey] = [], droppedAfter: [PageKey] = []) {
    precondition(!pages.isEmpty, "A PageWindow holds at least one page")
    self.pages = pages
    self.droppedBefore = droppedBefore
    self.droppedAfter = droppedAfter
    items = pages.flatMap(\.items)
  }

  /// The key of the next page to request, or `nil` when there is none.
  public var nextRequestKey: PageKey? {
    if let dropped = droppedAfter.last { return dropped }
    guard let key = pages.last?.nextKey, !key.isEmpty else { return nil }
    return .next(key)
  }

  /// The key of the previous page to request, or `nil` when there is none.
  public var prevRequestKey: PageKey? {
    if let dropped = droppedBefore.last { return dropped }
    guard let key = pages.first?.prevKey, !key.isEmpty else { return nil }
    return .prev(key)
  }

  /// The window with `page` (requested with ``nextRequestKey``) added at the end; beyond
  /// `maxPages` the first page is dropped.
  public func appending(_ page: Page, maxPages: Int?) -> PageWindow {
    var window = self
    if !window.droppedAfter.isEmpty { window.droppedAfter.removeLast() }
    window.pages.append(page)
    if let maxPages, window.pages.count > maxPages {
      window.droppedBefore.append(window.pages.removeFirst().key)
    }
    window.items = window.pages.flatMap(\.items)
    return window
  }

  /// The window with `page` (requested with ``prevRequestKey``) added at the front; beyond
  /// `maxPages` the last page is dropped.
  public func prepending(_ page: Page, maxPages: Int?) -> PageWindow {
    var window = self
    if !window.droppedBefore.isEmpty { window.droppedBefore.removeLast() }
    window.pages.insert(page, at: 0)
    if let maxPages, window.pages.count > maxPages {
      window.droppedAfter.append(window.pages.removeLast().key)
    }
    window.items = window.pages.flatMap(\.items)
    return window
  }

  /// The same window with its pages replaced (same count, same order).
  func replacingPages(_ newPages: [Page]) -> PageWindow {
    PageWindow(pages: newPages, droppedBefore: droppedBefore, droppedAfter: droppedAfter)
  }
}

extension PageWindow {
  /// Whether a next page can be requested.
  var canRequestNext: Bool { nextRequestKey != nil }
  /// Whether a previous page can be requested.
  var canRequestPrev: Bool { prevRequestKey != nil }
}

/// How a page was requested.
public enum PageKey: Hashable, Sendable, Codable {
  /// The first fetch (`fetch(param:)`).
  case initial
  /// `fetchNext(nextKey:param:)` with this key.
  case next(String)
  /// `fetchPrev(prevKey:param:)` with this key.
  case prev(String)
}

extension PageWindow.Page: Equatable where Element: Equatable {}
extension PageWindow.Page: Codable where Element: Codable {}
extension PageWindow: Equatable where Element: Equatable {
  public static func == (lhs: PageWindow, rhs: PageWindow) -> Bool {
    lhs.pages == rhs.pages && lhs.droppedBefore == rhs.droppedBefore && lhs.droppedAfter == rhs.droppedAfter
  }
}
extension PageWindow: Codable where Element: Codable {
  private enum CodingKeys: String, CodingKey {
    case pages, droppedBefore, droppedAfter
  }

  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    let pages = try container.decode([Page].self, forKey: .pages)
    guard !pages.isEmpty else {
      throw DecodingError.dataCorruptedError(forKey: .pages, in: container, debugDescription: "no page")
    }
    self.init(
      pages: pages,
      droppedBefore: try container.decode([PageKey].self, forKey: .droppedBefore),
      droppedAfter: try container.decode([PageKey].self, forKey: .droppedAfter))
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(pages, forKey: .pages)
    try container.encode(droppedBefore, forKey: .droppedBefore)
    try container.encode(droppedAfter, forKey: .droppedAfter)
  }
}

/// Content that says whether more pages exist each way (a ``PageWindow``).
protocol PagedContent {
  var pagingFlags: (next: Bool, prev: Bool) { get }
}

extension PageWindow: PagedContent {
  var pagingFlags: (next: Bool, prev: Bool) { (canRequestNext, canRequestPrev) }
}

/// A ``StoreCacher`` for a paginated list: it stores the ``PageWindow``.
public typealias PaginationStoreCacher<Param: Hashable & Sendable, Element: Sendable> = StoreCacher<
  Param, PageWindow<Element>
>

/// A ``Repository`` of a paginated list: its content is the ``PageWindow``.
public typealias PaginationRepository<Param: Hashable & Sendable, Element: Sendable> = Repository<
  Param, PageWindow<Element>
>
