public import Foundation

/// A ``Cacher`` keeping each param's data in any `KeyValueStore` (a `MemoryCache` by
/// default), with the store's `storedAt` as the cached-at date.
///
/// ```swift
/// let users = StoreCacher<UserID, User>(expiration: .minutes(30))
/// let tiered = StoreCacher(store: TieredCache(memory: MemoryCache(entryLifetime: nil), disk: disk))
/// let tested = StoreCacher<UserID, User>(expiration: .minutes(30), clock: manualClock)
/// ```
///
/// One clock runs everything: the cacher's ``now`` (expiry), its registry's release delay and
/// invalidation dates, and the default store's entry dates all come from the clock it is made
/// with, or from the registry it is given (see ``init(store:expiration:flows:)``). A store you
/// make yourself stamps entries by its own `now`: give it the same clock's date
/// (`MemoryCache(now: dateProvider(for: clock))`).
///
/// Expiry is the cacher's ``expiration``, never the store's: every entry is written with no
/// expiry (`Date.distantFuture`), so a store with an entry lifetime of its own — such as a
/// `MemoryCache` made with its default one-hour lifetime — does not drop the stale content
/// the repository shows while it refreshes. Content leaves the store when it is replaced,
/// cleared or evicted by the store's limits (a `countLimit` or `costLimit`).
public final class StoreCacher<Param: Hashable & Sendable, Data: Sendable>: Cacher {
  /// The store holding the data.
  public let store: any KeyValueStore<Param, Data>
  /// How long cached data stays valid; `nil` for forever.
  public let expiration: Duration?
  /// The wall clock that decides expiry.
  public let now: @Sendable () -> Date
  /// The loading states of this cacher's params.
  public let flows: FlowRegistry<Param, Data>
  /// ``store`` when it is a `MemoryCache`: the repository then reads it in place, without
  /// the hops off its actor and back that awaiting ``loadCachedData(param:)`` and
  /// ``needsRefresh(cachedAt:param:)`` cost (see `FlowCoordinator.readCache()`).
  @usableFromInline let memory: MemoryCache<Param, Data>?

  /// Creates a cacher over `store`, with a registry of its own, on one clock.
  ///
  /// - Parameters:
  ///   - store: Where the data lives; by default a `MemoryCache` without limits or lifetime,
  ///     dated by `clock`.
  ///   - expiration: How long data stays valid; `nil` (the default) for forever.
  ///   - clock: What decides expiry (by its date, see KilnCore's `dateProvider(for:)`), and
  ///     what the registry's release delay runs on.
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
      store: store, expiration: expiration,
      flows: FlowRegistry(releaseAfter: releaseAfter, abandonedFetch: abandonedFetch, clock: clock))
  }

  /// Creates a cacher over `store` whose params' states live in `flows`, dated by its clock
  /// (``FlowRegistry/now``).
  ///
  /// - Parameters:
  ///   - store: Where the data lives; by default a `MemoryCache` without limits or lifetime,
  ///     dated by `flows`' clock.
  ///   - expiration: How long data stays valid; `nil` (the default) for forever.
  ///   - flows: The registry of the params' loading states, and the clock of everything.
  public init(
    store: (any KeyValueStore<Param, Data>)? = nil,
    expiration: Duration? = nil,
    flows: FlowRegistry<Param, Data>
  ) {
    precondition(expiration.map { $0 >= .zero } ?? true, "StoreCacher expiration must not be negative")
    let store = store ?? MemoryCache<Param, Data>(entryLifetime: nil, now: flows.now)
    self.store = store
    self.memory = store as? MemoryCache<Param, Data>
    self.expiration = expiration
    self.flows = flows
    self.now = flows.now
  }

  /// Creates a cacher whose expiry runs on a wall clock of its own, apart from its registry's.
  @available(*, deprecated, message: "pass one clock: init(store:expiration:clock:) or init(store:expiration:flows:)")
  public convenience init(
    store: (any KeyValueStore<Param, Data>)? = nil,
    expiration: Duration? = nil,
    flows: FlowRegistry<Param, Data>? = nil,
    now: @escaping @Sendable () -> Date
  ) {
    self.init(store: store, expiration: expiration, flows: flows ?? FlowRegistry(now: now), now: now)
  }

  private init(
    store: (any KeyValueStore<Param, Data>)?, expiration: Duration?, flows: FlowRegistry<Param, Data>,
    now: @escaping @Sendable () -> Date
  ) {
    precondition(expiration.map { $0 >= .zero } ?? true, "StoreCacher expiration must not be negative")
    let store = store ?? MemoryCache<Param, Data>(entryLifetime: nil, now: now)
    self.store = store
    self.memory = store as? MemoryCache<Param, Data>
    self.expiration = expiration
    self.flows = flows
    self.now = now
  }

  /// The stored data of `param`.
  public func loadData(param: Param) async throws -> Data? {
    try await store.entry(forKey: param)?.value
  }

  /// Stores (or removes, with `nil`) the data of `param`.
  public func saveData(_ data: Data?, param: Param) async throws {
    if let data {
      // Never `nil`, which would apply the store's own entry lifetime (see the type's docs).
      try await store.setValue(data, forKey: param, expiresAt: .distantFuture)
    } else {
      try await store.removeValue(forKey: param)
    }
  }

  /// The store's `storedAt` for `param`.
  public func loadDataCachedAt(param: Param) async throws -> Date? {
    try await store.entry(forKey: param)?.storedAt
  }

  /// Does nothing: the store stamps each entry when it is saved.
  public func saveDataCachedAt(_ cachedAt: Date?, param: Param) async throws {}

  /// One read of the store's entry.
  public func loadCachedData(param: Param) async throws -> CachedData<Data>? {
    guard let entry = try await store.entry(forKey: param) else { return nil }
    return CachedData(data: entry.value, cachedAt: entry.storedAt)
  }

  /// One write to the store (or one removal, with `nil`).
  public func saveCachedData(_ data: Data?, cachedAt: Date?, param: Param) async throws {
    try await saveData(data, param: param)
  }
}
