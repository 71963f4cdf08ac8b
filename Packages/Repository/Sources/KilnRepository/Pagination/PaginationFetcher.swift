/// One page fetched by a ``PaginationFetcher``: its elements and the keys of the pages
/// around it. A `nil` or empty key means there is no page in that direction.
public struct PaginationResult<Element: Sendable>: Sendable {
  /// The elements of the page.
  public var data: [Element]
  /// The key of the next page, or `nil`.
  public var nextKey: String?
  /// The key of the previous page, or `nil` (two-way pagination only).
  public var prevKey: String?

  /// Creates a page.
  public init(data: [Element], nextKey: String?, prevKey: String? = nil) {
    self.data = data
    self.nextKey = nextKey
    self.prevKey = prevKey
  }
}

extension PaginationResult: Equatable where Element: Equatable {}

/// Fetches a list page by page, forwards.
///
/// ```swift
/// struct RepoFetcher: PaginationFetcher {
///   func fetch(param: UnitParam) async throws -> PaginationResult<Repo> { try await page(nil) }
///   func fetchNext(nextKey: String, param: UnitParam) async throws -> PaginationResult<Repo> {
///     try await page(nextKey)
///   }
/// }
/// ```
public protocol PaginationFetcher<Param, Element>: Sendable {
  /// What identifies the list.
  associatedtype Param: Hashable & Sendable
  /// The elements of the list.
  associatedtype Element: Sendable

  /// Fetches the first page.
  func fetch(param: Param) async throws -> PaginationResult<Element>

  /// Fetches the page of `nextKey`.
  func fetchNext(nextKey: String, param: Param) async throws -> PaginationResult<Element>
}

/// Fetches a list page by page in both directions (for a list opened in its middle).
public protocol TwoWayPaginationFetcher<Param, Element>: PaginationFetcher {
  /// Fetches the page of `prevKey`; its ``PaginationResult/prevKey`` is the page before it.
  func fetchPrev(prevKey: String, param: Param) async throws -> PaginationResult<Element>
}
