public import Foundation

/// The single source of truth for one kind of data: a ``Cacher`` for storage, and the live
/// loading state of each of its params (at most one fetch per param, shared by every flowable
/// and subscriber), released when nobody has used it for ``releaseDelay``.
///
/// ```swift
/// let users = Repository<UserID, User>(expiration: .minutes(30))
/// let user = AnyStoreFlowable.from(cacher: users, fetcher: UserFetcher(), param: id)
/// for await state in user.publish() { render(state) }
/// await users.invalidate(where: { $0.team == team })   // stale now; observed params refetch
/// ```
///
/// Keep one repository per kind of data, for as long as its states should be shared: two
/// screens showing user 42 through one repository share one state and one request. The
/// repository owns those states; the cacher under it only stores data. It is itself a
/// ``Cacher`` (forwarding to the one it was made over), so it is what
/// ``AnyStoreFlowable/from(cacher:fetcher:param:)`` and ``PaginationStoreFlowable``'s `from`
/// take.
///
/// One clock runs it: the release delay runs on the cacher's ``Cacher/clock`` and
/// invalidations are dated by its ``Cacher/now``, the same dates that expiry compares.
/// ``init(store:expiration:clock:releaseAfter:abandonedFetch:)`` passes its clock to the
/// cacher and the store it makes.
public final class Repository<Param: Hashable & Sendable, Data: Sendable>: Cacher {
  /// The storage under this repository.
  public let cacher: any Cacher<Param, Data>
  /// The live states of the params.
  @usableFromInline let flows: FlowRegistry<Param, Data>
  /// What a param's coordinator is built from.
  @usableFromInline let source: FlowSource<Param, Data>

  /// Creates a repository over `cacher`, on the cacher's clock.
  ///
  /// - Parameters:
  ///   - cacher: Where the data lives, and the clock of everything (``Cacher/clock``).
  ///   - releaseAfter: How long the state of an unused param is kept (five minutes by default).
  ///   - abandonedFetch: Whether a fetch nobody waits for any more is cancelled (the default)
  ///     or finishes and fills the cache.
  public init<C: Cacher<Param, Data>>(
    cacher: C,
    releaseAfter: Duration = .seconds(300),
    abandonedFetch: AbandonedFetchPolicy = .cancel
  ) {
    self.cacher = cacher
    source = FlowSource(cacher, paging: Self.contentPaging)
    flows = FlowRegistry(
      releaseAfter: releaseAfter, abandonedFetch: abandonedFetch, clock: cacher.clock, date: cacher.now)
  }

  /// Creates a repository over a ``StoreCacher`` made on one clock.
  ///
  /// - Parameters:
  ///   - store: Where the data lives; by default a `MemoryCache` without limits or lifetime,
  ///     dated by `clock` (see ``StoreCacher``).
  ///   - expiration: How long data stays valid; `nil` (the default) for forever.
  ///   - clock: What decides expiry (by its date, see KilnCore's `dateProvider(for:)`), dates
  ///     invalidations and runs the release delay. A test passes KilnTesting's `ManualClock`.
  ///   - releaseAfter: How long the state of an unused param is kept (five minutes by default).
  ///   - abandonedFetch: What happens to a fetch nobody waits for any more.
  public convenience init(
    store: (any KeyValueStore<Param, Data>)? = nil,
    expiration: Duration? = nil,
    clock: any Clock<Duration> = ContinuousClock(),
    releaseAfter: Duration = .seconds(300),
    abandonedFetch: AbandonedFetchPolicy = .cancel
  ) {
    self.init(
      cacher: StoreCacher(store: store, expiration: expiration, clock: clock), releaseAfter: releaseAfter,
      abandonedFetch: abandonedFetch)
  }

  /// Whether more pages exist each way, when the content is a ``PageWindow``: then every
  /// flowable of this repository shows it in its completed states, whichever made the
  /// param's state first.
  static var contentPaging: FlowStateMachine<Data>.Paging? {
    guard Data.self is any PagedContent.Type else { return nil }
    return { ($0 as? any PagedContent)?.pagingFlags ?? (next: false, prev: false) }
  }

  // MARK: - Live states

  /// How long the state of a param nobody observes or uses is kept.
  public var releaseDelay: Duration { flows.releaseDelay }

  /// What happens to a fetch when its last subscriber and waiter leave.
  public var abandonedFetch: AbandonedFetchPolicy { flows.abandonedFetch }

  /// The number of params whose state is held.
  public var count: Int { flows.count }

  /// The params whose state is held.
  public var params: [Param] { flows.params }

  /// Marks the data of every param matching `predicate` stale: held params that are observed
  /// refetch now, the others on their next use, and params not held count data cached
  /// until now as expired.
  ///
  /// - Parameter predicate: Which params to invalidate.
  public func invalidate(where predicate: @escaping @Sendable (Param) -> Bool) async {
    await flows.invalidate(where: predicate)
  }

  /// Marks every param's data stale (see ``invalidate(where:)``).
  public func invalidateAll() async {
    await flows.invalidate(where: { _ in true })
  }

  // MARK: - Cacher

  /// The cacher's expiration.
  public var expiration: Duration? { cacher.expiration }
  /// The cacher's clock.
  public var clock: any Clock<Duration> { cacher.clock }
  /// The cacher's wall clock, which also dates invalidations.
  public var now: @Sendable () -> Date { flows.now }

  /// The cacher's data of `param`.
  public func loadData(param: Param) async throws -> Data? {
    try await cacher.loadData(param: param)
  }

  /// Saves to the cacher, without changing any state: use a flowable's `update(_:)` to show it.
  public func saveData(_ data: Data?, param: Param) async throws {
    try await cacher.saveData(data, param: param)
  }

  /// When the cacher's data of `param` was cached.
  public func loadDataCachedAt(param: Param) async throws -> Date? {
    try await cacher.loadDataCachedAt(param: param)
  }

  /// Saves to the cacher when the data of `param` was cached.
  public func saveDataCachedAt(_ cachedAt: Date?, param: Param) async throws {
    try await cacher.saveDataCachedAt(cachedAt, param: param)
  }

  /// The cacher's data of `param` and when it was cached.
  public func loadCachedData(param: Param) async throws -> CachedData<Data>? {
    try await cacher.loadCachedData(param: param)
  }

  /// Saves to the cacher, without changing any state: use a flowable's `update(_:)` to show it.
  public func saveCachedData(_ data: Data?, cachedAt: Date?, param: Param) async throws {
    try await cacher.saveCachedData(data, cachedAt: cachedAt, param: param)
  }

  /// Whether the cacher says data of `param` cached at `cachedAt` must be fetched again, or an
  /// invalidation covers it.
  public func needsRefresh(cachedAt: Date?, param: Param) async -> Bool {
    if flows.isInvalidated(param, cachedAt: cachedAt) { return true }
    return await cacher.needsRefresh(cachedAt: cachedAt, param: param)
  }
}

extension Repository where Param == String {
  /// Marks the data of every param starting with `prefix` stale (see ``invalidate(where:)``).
  public func invalidate(prefix: String) async {
    await invalidate(where: { $0.hasPrefix(prefix) })
  }
}
