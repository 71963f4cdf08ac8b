import KilnCore
import _KilnSynchronization

/// What a ``Repository`` did since it was created: fetches and how they ended, callers that
/// joined a fetch in flight, cache reads and writes, states emitted to subscribers. Read it with
/// ``Repository/statistics``.
public struct RepositoryStatistics: Hashable, Sendable {
  /// Fetches started (by a subscription, a refresh, a validation or an invalidation).
  public var fetches = 0
  /// Fetches that returned data.
  public var fetchSuccesses = 0
  /// Fetches that failed, cancellations included.
  public var fetchFailures = 0
  /// Callers (a validation, `requireData` from both) that waited for a fetch already in flight
  /// instead of starting their own: the fetches single flight saved.
  public var fetchJoins = 0
  /// Reads of the cacher (each validation, a new subscription's first state).
  public var cacheReads = 0
  /// Writes to the cacher (fetched data, updates).
  public var cacheWrites = 0
  /// State changes emitted, each to every subscriber of its param.
  public var emissions = 0
  /// The params whose state is held now.
  public var params = 0

  /// Creates statistics, all zero.
  public init() {}
}

/// The live counters behind ``RepositoryStatistics``.
enum RepositoryCounter: Int, CaseIterable {
  case fetches, fetchSuccesses, fetchFailures, fetchJoins, cacheReads, cacheWrites, emissions
}

typealias RepositoryCounters = AtomicCounters<RepositoryCounter>

extension Repository: CountingSource {
  /// What the repository did since it was created; reading it costs a few atomic loads and a
  /// lock.
  public var statistics: RepositoryStatistics {
    let counters = flows.counters
    var statistics = RepositoryStatistics()
    statistics.fetches = counters[.fetches]
    statistics.fetchSuccesses = counters[.fetchSuccesses]
    statistics.fetchFailures = counters[.fetchFailures]
    statistics.fetchJoins = counters[.fetchJoins]
    statistics.cacheReads = counters[.cacheReads]
    statistics.cacheWrites = counters[.cacheWrites]
    statistics.emissions = counters[.emissions]
    statistics.params = flows.count
    return statistics
  }

  /// ``statistics`` named for export:
  ///
  /// | Name | Kind | Dimensions | Meaning |
  /// |---|---|---|---|
  /// | `kiln_repository_fetches_total` | counter | `outcome`: `started`, `succeeded`, `failed` | fetches started and how they ended |
  /// | `kiln_repository_fetch_joins_total` | counter | | callers that waited for a fetch in flight |
  /// | `kiln_repository_cache_reads_total` | counter | | reads of the cacher |
  /// | `kiln_repository_cache_writes_total` | counter | | writes to the cacher |
  /// | `kiln_repository_emissions_total` | counter | | state changes emitted to a param's subscribers |
  /// | `kiln_repository_params` | gauge | | params whose state is held |
  public func counterReadings() -> [CounterReading] {
    let s = statistics
    let fetches = "kiln_repository_fetches_total"
    return [
      CounterReading(fetches, [("outcome", "started")], value: s.fetches),
      CounterReading(fetches, [("outcome", "succeeded")], value: s.fetchSuccesses),
      CounterReading(fetches, [("outcome", "failed")], value: s.fetchFailures),
      CounterReading("kiln_repository_fetch_joins_total", value: s.fetchJoins),
      CounterReading("kiln_repository_cache_reads_total", value: s.cacheReads),
      CounterReading("kiln_repository_cache_writes_total", value: s.cacheWrites),
      CounterReading("kiln_repository_emissions_total", value: s.emissions),
      CounterReading("kiln_repository_params", value: s.params, kind: .gauge),
    ]
  }
}
