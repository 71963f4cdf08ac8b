public import Foundation
import _KilnSynchronization

/// A memory cache in front of a slower store: reads fall through and promote, writes go to
/// both, one lifetime for both tiers.
///
/// ```swift
/// let cache = TieredCache(
///   memory: MemoryCache<URL, Data>(countLimit: 200, entryLifetime: nil),
///   disk: try DiskCache<URL, Data>(directory: folder, sizeLimit: 100 << 20),
///   entryLifetime: .seconds(86_400)
/// )
/// try await cache.setValue(data, forKey: url)          // memory and disk
/// let hit = try await cache.value(forKey: url)        // memory, else disk (then promoted)
/// ```
///
/// A value read from the second tier is copied into memory with its original stored-at and
/// expiry dates, so freshness policies judge it by when it was really stored — unless a
/// write or removal of its key began while it was being read: the value may be older than
/// the one stored now, so it is returned but not copied. Writes stamp
/// both tiers with the same expiry (the cache's ``entryLifetime`` unless given), so the
/// tiers never disagree about when an entry expires.
///
/// - Important: The tiers' own default lifetimes are not used: every write passes an
///   explicit expiry. Two concurrent writes of the same key may land in the tiers in
///   different orders; the memory tier then holds one of the two values until its next
///   write or eviction.
public struct TieredCache<Key: Hashable & Sendable, Value: Sendable, Disk: KeyValueStore>: KeyValueStore, Sendable
where Disk.Key == Key, Disk.Value == Value {
  /// The first tier.
  public let memory: MemoryCache<Key, Value>

  /// The second tier.
  public let disk: Disk

  /// How long an entry stored without an explicit expiry lives in both tiers; `nil` for
  /// until removed or evicted.
  public let entryLifetime: Duration?

  private let now: @Sendable () -> Date
  /// Writes and removals in progress, so that a slow read does not promote a value they
  /// replaced.
  private let writes = WriteEpochs()
  /// Where reads were answered: see ``counterReadings()``.
  private let counters = AtomicCounters<TierCounter>()

  /// Puts `memory` in front of `disk`.
  ///
  /// - Parameters:
  ///   - memory: The first tier. Its own `entryLifetime` is not used.
  ///   - disk: The second tier, any `KeyValueStore` (``DiskCache``, ``SQLiteStore``…).
  ///   - entryLifetime: The lifetime of entries written without an explicit expiry, in
  ///     both tiers; `nil` (the default) for until removed or evicted.
  ///   - now: The wall clock that computes expiries.
  public init(
    memory: MemoryCache<Key, Value>,
    disk: Disk,
    entryLifetime: Duration? = nil,
    now: @escaping @Sendable () -> Date = Date.init
  ) {
    EntryLifetime.validate(entryLifetime, of: "TieredCache")
    self.memory = memory
    self.disk = disk
    self.entryLifetime = entryLifetime
    self.now = now
  }

  /// The entry under `key` from memory, else from the second tier (then copied into
  /// memory with its dates, unless a write or removal of `key` began during the read).
  ///
  /// - Throws: What the second tier throws.
  public func entry(forKey key: Key) async throws -> CacheEntry<Value>? {
    if let hit = memory.entry(forKey: key) {
      counters.add(.memoryHits)
      return hit
    }
    // Taken before the second tier is read, checked under the memory tier's lock when
    // promoting: a write or removal that began in between has stored something newer (or
    // nothing) in both tiers, and must win.
    let snapshot = writes.snapshot(key)
    guard let entry = try await disk.entry(forKey: key) else {
      counters.add(.misses)
      return nil
    }
    counters.add(.secondTierHits)
    if let snapshot {
      memory.setEntry(entry, forKey: key, if: { writes.isUnchanged(key, since: snapshot) })
    }
    return entry
  }

  /// Stores `value` in both tiers with the same expiry.
  ///
  /// - Parameters:
  ///   - value: The value to store.
  ///   - key: Its key.
  ///   - expiresAt: When it expires; `nil` applies ``entryLifetime`` (and never expires
  ///     without one).
  /// - Throws: What the second tier throws; the memory tier then no longer holds the key,
  ///   so the tiers cannot disagree.
  public func setValue(_ value: Value, forKey key: Key, expiresAt: Date?) async throws {
    let stamp = now()
    let expiry = EntryLifetime.expiry(expiresAt, storedAt: stamp, lifetime: entryLifetime) ?? .distantFuture
    writes.begin(key)
    defer { writes.end(key) }
    memory.setEntry(CacheEntry(value: value, storedAt: stamp, expiresAt: expiry), forKey: key)
    do {
      try await disk.setValue(value, forKey: key, expiresAt: expiry)
    } catch {
      memory.removeValue(forKey: key)
      throw error
    }
  }

  /// Removes `key` from both tiers.
  ///
  /// - Throws: What the second tier throws (the memory tier is cleared regardless).
  public func removeValue(forKey key: Key) async throws {
    writes.begin(key)
    defer { writes.end(key) }
    memory.removeValue(forKey: key)
    try await disk.removeValue(forKey: key)
  }

  /// Empties both tiers.
  ///
  /// - Throws: What the second tier throws (the memory tier is cleared regardless).
  public func removeAll() async throws {
    writes.beginAll()
    defer { writes.endAll() }
    memory.removeAll()
    try await disk.removeAll()
  }
}

/// Where a ``TieredCache`` answered a read.
enum TierCounter: Int, CaseIterable {
  case memoryHits, secondTierHits, misses
}

extension TieredCache: CountingSource {
  /// Where reads were answered, named for export (each tier's own counters are its own:
  /// register ``memory`` and ``disk`` too for theirs):
  ///
  /// | Name | Kind | Dimensions | Meaning |
  /// |---|---|---|---|
  /// | `kiln_tiered_cache_lookups_total` | counter | `result`: `memory_hit`, `second_tier_hit`, `miss` | reads answered by the memory tier, by the second tier (then copied into memory), or by neither |
  public func counterReadings() -> [CounterReading] {
    let name = "kiln_tiered_cache_lookups_total"
    return [
      CounterReading(name, [("result", "memory_hit")], value: counters[.memoryHits]),
      CounterReading(name, [("result", "second_tier_hit")], value: counters[.secondTierHits]),
      CounterReading(name, [("result", "miss")], value: counters[.misses]),
    ]
  }
}
