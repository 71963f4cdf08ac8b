public import Foundation

/// A ``Cacher`` keeping each param's data in any `KeyValueStore` (a `MemoryCache` by
/// default), with the store's `storedAt` as the cached-at date.
///
/// ```swift
/// let users = Repository(cacher: StoreCacher<UserID, User>(expiration: .minutes(30)))
/// let tiered = StoreCacher(store: TieredCache(memory: MemoryCache(entryLifetime: nil), disk: disk))
/// ```
///
/// ``Repository/init(store:expiration:clock:releaseAfter:abandonedFetch:)`` makes one for you.
///
/// One clock runs everything: the cacher's ``now`` (expiry), the default store's entry dates,
/// and the release delay and invalidation dates of a ``Repository`` made over it all come from
/// ``clock``. A store you make yourself stamps entries by its own `now`: give it the same
/// clock's date (`MemoryCache(now: dateProvider(for: clock))`).
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
  /// The clock everything is dated by.
  public let clock: any Clock<Duration>
  /// The wall clock that decides expiry: ``clock``'s date.
  public let now: @Sendable () -> Date
  /// ``store`` when it is a `MemoryCache`: the repository then reads it in place, without
  /// the hops off its actor and back that awaiting ``loadCachedData(param:)`` and
  /// ``needsRefresh(cachedAt:param:)`` cost (see `FlowCoordinator.readCache()`).
  @usableFromInline let memory: MemoryCache<Param, Data>?

  /// Creates a cacher over `store`, on one clock.
  ///
  /// - Parameters:
  ///   - store: Where the data lives; by default a `MemoryCache` without limits or lifetime,
  ///     dated by `clock`.
  ///   - expiration: How long data stays valid; `nil` (the default) for forever.
  ///   - clock: What decides expiry (by its date, see KilnCore's `dateProvider(for:)`), and
  ///     what a ``Repository`` made over this cacher runs on.
  public init(
    store: (any KeyValueStore<Param, Data>)? = nil,
    expiration: Duration? = nil,
    clock: any Clock<Duration> = ContinuousClock()
  ) {
    precondition(expiration.map { $0 >= .zero } ?? true, "StoreCacher expiration must not be negative")
    let now = dateProvider(for: clock)
    let store = store ?? MemoryCache<Param, Data>(entryLifetime: nil, now: now)
    self.store = store
    self.memory = store as? MemoryCache<Param, Data>
    self.expiration = expiration
    self.clock = clock
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
