public import Foundation

/// A thread-safe in-memory cache with strict count and cost limits, least-recently-used
/// eviction and per-entry expiry.
///
/// Unlike Foundation's `NSCache`, the limits are **strict**: once any call returns, the cache
/// holds at most ``countLimit`` entries whose costs add up to at most ``totalCostLimit``,
/// even with many threads writing at once. Eviction removes the least recently used entry
/// first; reading or writing an entry makes it the most recently used.
///
/// ```swift
/// let thumbnails = MemoryCache<URL, Data>(countLimit: 500, totalCostLimit: 50 << 20, cost: \.count)
/// thumbnails[url] = data            // insert or replace
/// if let data = thumbnails[url] {}  // hit: now the most recently used
/// thumbnails[url] = nil             // remove
/// ```
///
/// The synchronous API (subscript, ``value(forKey:)``, ``entry(forKey:)``,
/// ``setValue(_:forKey:expiresAt:)``, ``removeValue(forKey:)``, ``removeAll()``) is for hot
/// paths; the same methods satisfy `KeyValueStore`, so the cache also backs any pipeline.
///
/// ## Expiry
///
/// Entries stored without an explicit expiry live for ``entryLifetime`` (one hour by
/// default, as Loadability's `Cache`); `nil` keeps them until evicted. An expired entry is
/// never returned and is removed when it is next read, or by ``removeExpired()``.
///
/// - Important: The cache is guarded by a lock, not an actor: every call is synchronous
///   and short. The `cost` and `now` closures are called outside the lock, and values
///   that leave the cache are released outside it too, so their deinitialisers may use
///   the cache.
public final class MemoryCache<Key: Hashable & Sendable, Value: Sendable>: SynchronousKeyValueStore, Sendable {
  @usableFromInline
  struct State {
    @usableFromInline var table: LRUTable<Key, Value>
    @usableFromInline var statistics = MemoryCacheStatistics()

    @usableFromInline
    init(table: LRUTable<Key, Value>) {
      self.table = table
    }
  }

  // A KilnMutex behind an inlinable facade: the hot path specialises in the caller.
  @usableFromInline let state: InlinableLock<State>
  @usableFromInline let costOf: (@Sendable (Value) -> Int)?
  /// The injected wall clock; `nil` for ``StoreClock/coarse``, read inline.
  @usableFromInline let clock: (@Sendable () -> Date)?
  /// ``entryLifetime`` in seconds, or `nil`.
  @usableFromInline let lifetimeSeconds: Double?

  /// The largest number of entries; `nil` for no limit.
  public let countLimit: Int?

  /// The largest sum of entry costs; `nil` for no limit.
  public let totalCostLimit: Int?

  /// How long an entry stored without an explicit expiry lives; `nil` for until evicted.
  public let entryLifetime: Duration?

  /// Creates an empty cache.
  ///
  /// ```swift
  /// let cache = MemoryCache<String, Article>(countLimit: 100, entryLifetime: .minutes(5))
  /// ```
  ///
  /// - Parameters:
  ///   - countLimit: The largest number of entries; `nil` (the default) for no limit.
  ///     `0` caches nothing.
  ///   - totalCostLimit: The largest sum of costs; `nil` (the default) for no limit.
  ///   - cost: The cost of a value, counted against `totalCostLimit`; the default is `1`
  ///     per entry. Negative costs count as `0`. Called outside the cache's lock.
  ///   - entryLifetime: How long entries stored without an explicit expiry live; one hour
  ///     by default, `nil` for until evicted.
  ///   - now: The wall clock that stamps and expires entries; by default
  ///     ``StoreClock/coarse``, millisecond-precise and cheap enough for a hot path.
  /// - Important: Limits must not be negative, and `entryLifetime` must be positive.
  public convenience init(
    countLimit: Int? = nil,
    totalCostLimit: Int? = nil,
    cost: (@Sendable (Value) -> Int)? = nil,
    entryLifetime: Duration? = .seconds(3600),
    now: @escaping @Sendable () -> Date = StoreClock.coarse
  ) {
    self.init(
      countLimit: countLimit, totalCostLimit: totalCostLimit, cost: cost, entryLifetime: entryLifetime,
      clock: now)
  }

  init(
    countLimit: Int?,
    totalCostLimit: Int?,
    cost: (@Sendable (Value) -> Int)?,
    entryLifetime: Duration?,
    clock: (@Sendable () -> Date)?
  ) {
    precondition((countLimit ?? 0) >= 0, "MemoryCache countLimit must not be negative, got \(countLimit!)")
    precondition((totalCostLimit ?? 0) >= 0, "MemoryCache totalCostLimit must not be negative, got \(totalCostLimit!)")
    EntryLifetime.validate(entryLifetime, of: "MemoryCache")
    self.countLimit = countLimit
    self.totalCostLimit = totalCostLimit
    self.entryLifetime = entryLifetime
    self.costOf = cost
    self.clock = clock
    self.lifetimeSeconds = entryLifetime?.timeInterval
    state = InlinableLock(
      State(table: LRUTable(countLimit: countLimit ?? .max, costLimit: totalCostLimit ?? .max)))
  }

  /// Creates an empty cache stamped by ``StoreClock/coarse``, which it reads inline.
  ///
  /// ```swift
  /// let cache = MemoryCache<String, Article>(countLimit: 100, entryLifetime: .minutes(5))
  /// ```
  ///
  /// - Parameters:
  ///   - countLimit: The largest number of entries; `nil` (the default) for no limit.
  ///     `0` caches nothing.
  ///   - totalCostLimit: The largest sum of costs; `nil` (the default) for no limit.
  ///   - cost: The cost of a value, counted against `totalCostLimit`; the default is `1`
  ///     per entry. Negative costs count as `0`. Called outside the cache's lock.
  ///   - entryLifetime: How long entries stored without an explicit expiry live; one hour
  ///     by default, `nil` for until evicted.
  /// - Important: Limits must not be negative, and `entryLifetime` must be positive.
  public convenience init(
    countLimit: Int? = nil,
    totalCostLimit: Int? = nil,
    cost: (@Sendable (Value) -> Int)? = nil,
    entryLifetime: Duration? = .seconds(3600)
  ) {
    self.init(
      countLimit: countLimit, totalCostLimit: totalCostLimit, cost: cost, entryLifetime: entryLifetime,
      clock: nil)
  }

  /// The current time as seconds since the reference date, from the injected clock or
  /// else the coarse clock read inline.
  @inlinable
  var instant: Double {
    if let clock { return clock().timeIntervalSinceReferenceDate }
    return StoreClock.coarseInstant()
  }

  /// When an entry stored at `stored` expires: `explicit` when given, else after
  /// ``entryLifetime``, else never (`.infinity`), as `EntryLifetime.expiry` computes it.
  @inlinable
  func expiry(_ explicit: Date?, storedAt stored: Double) -> Double {
    if let explicit { return explicit.timeIntervalSinceReferenceDate }
    guard let lifetimeSeconds else { return .infinity }
    return stored + lifetimeSeconds
  }

  // MARK: - Reading

  /// The value stored under `key`, or `nil`; assigning stores a value (with the default
  /// lifetime) and assigning `nil` removes it.
  ///
  /// ```swift
  /// cache["a"] = 1
  /// cache["a"]        // 1
  /// cache["a"] = nil  // removed
  /// ```
  @inlinable
  public subscript(key: Key) -> Value? {
    get { entry(forKey: key)?.value }
    set {
      if let newValue {
        setValue(newValue, forKey: key, expiresAt: nil)
      } else {
        removeValue(forKey: key)
      }
    }
  }

  /// The value stored under `key`, or `nil` when there is none or it has expired.
  ///
  /// A hit makes the entry the most recently used.
  ///
  /// - Parameter key: The key to look up.
  /// - Returns: The value, or `nil`.
  @inlinable
  public func value(forKey key: Key) -> Value? {
    entry(forKey: key)?.value
  }

  /// The entry stored under `key`, or `nil` when there is none or it has expired.
  ///
  /// A hit makes the entry the most recently used; an expired entry is removed.
  ///
  /// - Parameter key: The key to look up.
  /// - Returns: The entry with its stored-at and expiry dates, or `nil`.
  @inlinable
  public func entry(forKey key: Key) -> CacheEntry<Value>? {
    let found: LRUNode<Key, Value>? = state.withLock { state in
      if let node = state.table.get(key) {
        state.statistics.hits += 1
        return node
      }
      state.statistics.misses += 1
      return nil
    }
    guard let found else { return nil }
    if found.expiresAt != .infinity {
      // The clock may be user code: judged outside the lock, then the entry is removed only if it
      // is still the one that was read.
      if instant > found.expiresAt {
        let (storedAt, expiresAt) = (found.storedAt, found.expiresAt)
        let removed = state.withLock { state in
          state.statistics.hits -= 1
          state.statistics.misses += 1
          state.statistics.expirations += 1
          return state.table.remove(key) { $0.storedAt == storedAt && $0.expiresAt == expiresAt }
        }
        withExtendedLifetime(removed) {}
        return nil
      }
    }
    return CacheEntry(
      value: found.value,
      storedAt: Date(timeIntervalSinceReferenceDate: found.storedAt),
      expiresAt: found.expiresAt == .infinity ? nil : Date(timeIntervalSinceReferenceDate: found.expiresAt)
    )
  }

  /// Whether a value that has not expired is stored under `key`, without marking it used.
  public func contains(_ key: Key) -> Bool {
    guard let node = state.withLock({ $0.table.peek(key) }) else { return false }
    return node.expiresAt == .infinity || instant <= node.expiresAt
  }

  // MARK: - Writing

  /// Stores `value` under `key` as the most recently used entry, evicting least recently
  /// used entries until the limits hold.
  ///
  /// - Parameters:
  ///   - value: The value to store.
  ///   - key: Its key.
  ///   - expiresAt: When it expires; `nil` applies ``entryLifetime``.
  /// - Important: A value whose cost alone exceeds ``totalCostLimit`` (or any value when
  ///   ``countLimit`` is `0`) is not stored, and any older value under `key` is removed, so
  ///   the cache never answers with a value older than the last one set. Such rejections
  ///   are counted in ``statistics``.
  @inlinable
  public func setValue(_ value: Value, forKey key: Key, expiresAt: Date?) {
    let stored = instant
    insert(
      value, forKey: key, cost: costOf.map { max(0, $0(value)) } ?? 1,
      storedAt: stored, expiresAt: expiry(expiresAt, storedAt: stored))
  }

  /// Stores `value` under `key` with an explicit cost instead of the cost closure's.
  ///
  /// - Parameters:
  ///   - value: The value to store.
  ///   - key: Its key.
  ///   - cost: Its cost against ``totalCostLimit``; negative counts as `0`.
  ///   - expiresAt: When it expires; `nil` applies ``entryLifetime``.
  @inlinable
  public func setValue(_ value: Value, forKey key: Key, cost: Int, expiresAt: Date? = nil) {
    let stored = instant
    insert(value, forKey: key, cost: max(0, cost), storedAt: stored, expiresAt: expiry(expiresAt, storedAt: stored))
  }

  /// Stores a whole entry, keeping its `CacheEntry/storedAt` date.
  ///
  /// ``TieredCache`` uses it to promote an entry read from a slower tier without making
  /// it look fresher than it is.
  ///
  /// - Parameters:
  ///   - entry: The entry; its `expiresAt` of `nil` means it never expires.
  ///   - key: Its key.
  @inlinable
  public func setEntry(_ entry: CacheEntry<Value>, forKey key: Key) {
    insert(
      entry.value, forKey: key, cost: costOf.map { max(0, $0(entry.value)) } ?? 1,
      storedAt: entry.storedAt.timeIntervalSinceReferenceDate,
      expiresAt: entry.expiresAt?.timeIntervalSinceReferenceDate ?? .infinity)
  }

  /// Stores a whole entry, as ``setEntry(_:forKey:)``, only if `isCurrent` — evaluated under
  /// the cache's lock, after the cost closure ran outside it — answers `true`.
  ///
  /// ``TieredCache`` promotes through it, so that a write that lands first wins.
  ///
  /// - Parameter isCurrent: Must be short and must not call into the cache or user code.
  /// - Returns: Whether the entry was stored (or refused by the limits).
  @discardableResult
  func setEntry(_ entry: CacheEntry<Value>, forKey key: Key, if isCurrent: () -> Bool) -> Bool {
    let cost = costOf.map { max(0, $0(entry.value)) } ?? 1
    let stored = entry.storedAt.timeIntervalSinceReferenceDate
    let expires = entry.expiresAt?.timeIntervalSinceReferenceDate ?? .infinity
    var replaced: Value?
    var firstEvicted: LRUNode<Key, Value>?
    var moreEvicted: [LRUNode<Key, Value>]?
    let inserted = state.withLock { state in
      guard isCurrent() else { return false }
      guard state.table.canHold(cost: cost) else {
        state.statistics.rejections += 1
        replaced = state.table.remove(key)?.value
        return true
      }
      state.table.insert(
        entry.value, forKey: key, cost: cost, storedAt: stored, expiresAt: expires,
        replaced: &replaced, firstEvicted: &firstEvicted, moreEvicted: &moreEvicted)
      if firstEvicted != nil { state.statistics.evictions += 1 + (moreEvicted?.count ?? 0) }
      return true
    }
    withExtendedLifetime((replaced, firstEvicted, moreEvicted)) {}
    return inserted
  }

  @inlinable
  func insert(_ value: Value, forKey key: Key, cost: Int, storedAt stored: Double, expiresAt expires: Double) {
    // What leaves the cache is collected here and released after the lock is dropped.
    var replaced: Value?
    var firstEvicted: LRUNode<Key, Value>?
    var moreEvicted: [LRUNode<Key, Value>]?
    state.withLock { state in
      guard state.table.canHold(cost: cost) else {
        state.statistics.rejections += 1
        replaced = state.table.remove(key)?.value
        return
      }
      state.table.insert(
        value, forKey: key, cost: cost, storedAt: stored, expiresAt: expires,
        replaced: &replaced, firstEvicted: &firstEvicted, moreEvicted: &moreEvicted)
      if firstEvicted != nil { state.statistics.evictions += 1 + (moreEvicted?.count ?? 0) }
    }
    withExtendedLifetime((replaced, firstEvicted, moreEvicted)) {}
  }

  /// Removes the value stored under `key`, if any.
  ///
  /// - Parameter key: The key to remove.
  @inlinable
  public func removeValue(forKey key: Key) {
    let removed = state.withLock { $0.table.remove(key) }
    withExtendedLifetime(removed) {}
  }

  /// Removes every entry.
  public func removeAll() {
    let removed = state.withLock { $0.table.removeAll() }
    withExtendedLifetime(removed) {}
  }

  /// Removes every expired entry now instead of when each is next read (O(n)).
  ///
  /// - Returns: The number of entries removed.
  @discardableResult
  public func removeExpired() -> Int {
    let instant = instant
    let removed = state.withLock { state in
      let removed = state.table.removeExpired(at: instant)
      state.statistics.expirations += removed.count
      return removed
    }
    return removed.count
  }

  // MARK: - Inspecting

  /// The number of entries, expired ones that were not removed yet included.
  public var count: Int {
    state.withLock { $0.table.count }
  }

  /// The sum of the entries' costs.
  public var totalCost: Int {
    state.withLock { $0.table.totalCost }
  }

  /// The keys from least to most recently used (the order of eviction).
  public var keys: [Key] {
    state.withLock { $0.table.keysOldestFirst }
  }

  /// Hits, misses, evictions, expirations and rejections since the cache was created.
  public var statistics: MemoryCacheStatistics {
    state.withLock { $0.statistics }
  }
}

/// Counters of a ``MemoryCache``'s activity.
public struct MemoryCacheStatistics: Hashable, Sendable {
  /// Reads that found a live entry.
  public var hits = 0
  /// Reads that found nothing or an expired entry.
  public var misses = 0
  /// Entries removed to respect the limits.
  public var evictions = 0
  /// Expired entries removed.
  public var expirations = 0
  /// Writes refused because the value alone could not fit under the limits.
  public var rejections = 0

  /// Creates counters, all zero by default.
  public init(hits: Int = 0, misses: Int = 0, evictions: Int = 0, expirations: Int = 0, rejections: Int = 0) {
    self.hits = hits
    self.misses = misses
    self.evictions = evictions
    self.expirations = expirations
    self.rejections = rejections
  }
}

extension MemoryCache: CountingSource {
  /// The cache's counters (see ``statistics``) and its size, named for export:
  ///
  /// | Name | Kind | Dimensions | Meaning |
  /// |---|---|---|---|
  /// | `kiln_memory_cache_lookups_total` | counter | `result`: `hit`, `miss` | reads; an expired entry is a miss |
  /// | `kiln_memory_cache_evictions_total` | counter | | entries removed to respect the limits |
  /// | `kiln_memory_cache_expirations_total` | counter | | expired entries removed |
  /// | `kiln_memory_cache_rejections_total` | counter | | writes of a value that could not fit alone |
  /// | `kiln_memory_cache_entries` | gauge | | entries held, expired ones not yet removed included |
  /// | `kiln_memory_cache_cost` | gauge | | the sum of the entries' costs |
  public func counterReadings() -> [CounterReading] {
    let (statistics, count, cost) = state.withLock { ($0.statistics, $0.table.count, $0.table.totalCost) }
    return [
      CounterReading("kiln_memory_cache_lookups_total", [("result", "hit")], value: statistics.hits),
      CounterReading("kiln_memory_cache_lookups_total", [("result", "miss")], value: statistics.misses),
      CounterReading("kiln_memory_cache_evictions_total", value: statistics.evictions),
      CounterReading("kiln_memory_cache_expirations_total", value: statistics.expirations),
      CounterReading("kiln_memory_cache_rejections_total", value: statistics.rejections),
      CounterReading("kiln_memory_cache_entries", value: count, kind: .gauge),
      CounterReading("kiln_memory_cache_cost", value: cost, kind: .gauge),
    ]
  }
}
