/// A single source of truth for one param: observe its loading state, read it, refresh it or
/// write it, and every observer sees the same states in the same order.
///
/// ``AnyStoreFlowable`` and ``PaginationStoreFlowable`` (whose data is its held elements)
/// both conform, so generic code over `some StoreFlowable` covers plain and paged content.
///
/// ```swift
/// let user = AnyStoreFlowable.from(cacher: userCacher, fetcher: UserFetcher(), param: userID)
/// for await state in user.publish() { render(state) }
/// ```
public protocol StoreFlowable<Data>: Sendable {
  /// The content.
  associatedtype Data: Sendable

  /// The loading state: the current state first, then every change, until the iterating
  /// task is cancelled (a subscriber more than 64 changes behind skips the oldest it has not
  /// read: see ``LoadingStateSequence``). Subscribing validates the cache (fetching when it is empty or
  /// expired); every subscriber of a param shares one fetch.
  ///
  /// - Parameter forceRefresh: Fetch even when the cache is valid.
  /// - Returns: A sequence of states; equal consecutive states are not emitted when the
  ///   content is `Equatable`.
  func publish(forceRefresh: Bool) -> LoadingStateSequence<Data>

  /// Valid data from where `from` says.
  ///
  /// - Parameter from: ``GettingFrom/both`` (valid cache, else fetch), ``GettingFrom/origin``
  ///   (always fetch) or ``GettingFrom/cache`` (never fetch).
  /// - Returns: The data.
  /// - Throws: ``NoSuchElementError`` when `.cache` has no valid data; the fetch's error.
  func requireData(from: GettingFrom) async throws -> Data

  /// Fetches when the cache is empty, expired or invalidated, and waits for it.
  func validate() async

  /// Fetches again, superseding any fetch in flight, and waits. A failure keeps the content
  /// (in the cache and in the state) and reaches every subscriber as `.error(_, content:)`.
  func refresh() async

  /// Writes `newData` to the cache and the state (`nil` removes it); a fetch that started
  /// earlier never overwrites it.
  func update(_ newData: Data?) async

  /// Removes the data from the cache; the state becomes `.loading(content: nil)`.
  func clear() async
}

extension StoreFlowable {
  /// ``publish(forceRefresh:)`` without forcing a refresh.
  public func publish() -> LoadingStateSequence<Data> {
    publish(forceRefresh: false)
  }

  /// Valid data from where `from` says, or `nil` instead of an error.
  ///
  /// - Parameter from: Where to get the data; ``GettingFrom/both`` by default.
  /// - Returns: The data, or `nil`.
  public func getData(from: GettingFrom = .both) async -> Data? {
    try? await requireData(from: from)
  }

  /// ``requireData(from:)`` from ``GettingFrom/both``.
  public func requireData() async throws -> Data {
    try await requireData(from: .both)
  }
}
