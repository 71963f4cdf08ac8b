import _KilnSynchronization

/// What a persistent store (``DiskCache``, ``SQLiteStore``) did since it was opened in this
/// process: reads and how they ended, writes and their bytes, removals, evictions and
/// expirations. Read it with the store's `statistics`.
public struct StoreStatistics: Hashable, Sendable {
  /// Reads that returned a value.
  public var hits = 0
  /// Reads that returned nothing (no entry, an expired one, or one that cannot be read).
  public var misses = 0
  /// Misses because the entry had expired.
  public var expiredReads = 0
  /// Misses because the entry could not be read as a value (a corrupt or truncated file, or
  /// bytes of another version of the value type).
  public var unreadableEntries = 0
  /// Entries written.
  public var writes = 0
  /// Bytes written: the encoded keys and values (for ``DiskCache``, whole entry files).
  public var writtenBytes = 0
  /// Calls that removed a key (whether or not it was stored).
  public var removals = 0
  /// Entries a write removed to respect a size limit (``DiskCache``).
  public var evictions = 0
  /// Entries removed by `removeExpired()` (for ``DiskCache``, files that are no valid entry
  /// too).
  public var expirations = 0

  /// Creates statistics, all zero.
  public init() {}
}

/// The live counters behind ``StoreStatistics``.
enum StoreCounter: Int, CaseIterable {
  case hits, misses, expiredReads, unreadableEntries, writes, writtenBytes, removals, evictions, expirations
}

typealias StoreCounters = AtomicCounters<StoreCounter>

extension StoreStatistics {
  init(_ counters: StoreCounters) {
    hits = counters[.hits]
    misses = counters[.misses]
    expiredReads = counters[.expiredReads]
    unreadableEntries = counters[.unreadableEntries]
    writes = counters[.writes]
    writtenBytes = counters[.writtenBytes]
    removals = counters[.removals]
    evictions = counters[.evictions]
    expirations = counters[.expirations]
  }

  /// These counters named for export under `prefix` (`kiln_disk_cache`, `kiln_sqlite_store`).
  func readings(prefix: String) -> [CounterReading] {
    [
      CounterReading(prefix + "_lookups_total", [("result", "hit")], value: hits),
      CounterReading(prefix + "_lookups_total", [("result", "miss")], value: misses),
      CounterReading(prefix + "_expired_reads_total", value: expiredReads),
      CounterReading(prefix + "_unreadable_entries_total", value: unreadableEntries),
      CounterReading(prefix + "_writes_total", value: writes),
      CounterReading(prefix + "_written_bytes_total", value: writtenBytes),
      CounterReading(prefix + "_removals_total", value: removals),
      CounterReading(prefix + "_evictions_total", value: evictions),
      CounterReading(prefix + "_expirations_total", value: expirations),
    ]
  }
}

extension DiskCache: CountingSource {
  /// What the cache did since it was opened: see ``StoreStatistics``.
  public var statistics: StoreStatistics {
    StoreStatistics(counters)
  }

  /// ``statistics`` named for export, with the prefix `kiln_disk_cache`:
  /// `kiln_disk_cache_lookups_total` (`result`: `hit`, `miss`), `_expired_reads_total`,
  /// `_unreadable_entries_total`, `_writes_total`, `_written_bytes_total`, `_removals_total`,
  /// `_evictions_total`, `_expirations_total`.
  public func counterReadings() -> [CounterReading] {
    statistics.readings(prefix: "kiln_disk_cache")
  }
}

extension SQLiteStore: CountingSource {
  /// What the store did since it was opened in this process: see ``StoreStatistics``
  /// (``StoreStatistics/evictions`` stays 0: the store has no size limit).
  public var statistics: StoreStatistics {
    StoreStatistics(counters)
  }

  /// ``statistics`` named for export, with the prefix `kiln_sqlite_store`:
  /// `kiln_sqlite_store_lookups_total` (`result`: `hit`, `miss`), `_expired_reads_total`,
  /// `_unreadable_entries_total`, `_writes_total`, `_written_bytes_total`, `_removals_total`,
  /// `_evictions_total`, `_expirations_total`.
  public func counterReadings() -> [CounterReading] {
    statistics.readings(prefix: "kiln_sqlite_store")
  }
}

extension SerializableCache: CountingSource {
  /// What the cache did since it was loaded: see ``StoreStatistics``.
  ///
  /// ``StoreStatistics/writtenBytes`` counts the journal records of the values stored (not
  /// compactions), ``StoreStatistics/evictions`` the entries the count limit removed, and
  /// ``StoreStatistics/unreadableEntries`` stays 0: records that no longer decode are skipped
  /// while loading and counted in ``recovery``.
  public var statistics: StoreStatistics {
    StoreStatistics(counters)
  }

  /// ``statistics`` named for export, with the prefix `kiln_serializable_cache`:
  /// `kiln_serializable_cache_lookups_total` (`result`: `hit`, `miss`), `_expired_reads_total`,
  /// `_unreadable_entries_total`, `_writes_total`, `_written_bytes_total`, `_removals_total`,
  /// `_evictions_total`, `_expirations_total`.
  public func counterReadings() -> [CounterReading] {
    statistics.readings(prefix: "kiln_serializable_cache")
  }
}

extension UserDefaultsStore: CountingSource {
  /// What the store did since it was created: see ``StoreStatistics``.
  ///
  /// ``StoreStatistics/writtenBytes`` counts preference names and encoded entries;
  /// ``StoreStatistics/evictions`` and ``StoreStatistics/expirations`` stay 0 (the store has
  /// no limit, and removes an expired entry when it reads it).
  public var statistics: StoreStatistics {
    StoreStatistics(counters)
  }

  /// ``statistics`` named for export, with the prefix `kiln_user_defaults_store`:
  /// `kiln_user_defaults_store_lookups_total` (`result`: `hit`, `miss`), `_expired_reads_total`,
  /// `_unreadable_entries_total`, `_writes_total`, `_written_bytes_total`, `_removals_total`,
  /// `_evictions_total`, `_expirations_total`.
  public func counterReadings() -> [CounterReading] {
    statistics.readings(prefix: "kiln_user_defaults_store")
  }
}
