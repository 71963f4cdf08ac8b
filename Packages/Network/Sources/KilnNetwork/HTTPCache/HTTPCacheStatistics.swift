import KilnCore
import _KilnSynchronization

/// What an ``HTTPCache`` did since it was created: how requests were answered, how
/// revalidations ended, what was stored. Read it with ``HTTPCache/statistics``.
///
/// Every request a ``CachingTransport`` or ``HTTPCaching`` stage handles counts once in one of
/// the lookup counters (``hits`` through ``bypassed``); what happened next counts in the
/// others. The counters only grow.
public struct HTTPCacheStatistics: Hashable, Sendable {
  /// Requests answered by a fresh stored response, without asking the origin.
  public var hits = 0
  /// Requests answered at once by a stale response under `stale-while-revalidate`, while a
  /// background revalidation asked the origin.
  public var staleHits = 0
  /// Requests sent to the origin because nothing usable was stored (no entry for the URL, or
  /// none matching its `Vary` fields).
  public var misses = 0
  /// Requests sent to the origin because the stored response was stale, or must be validated
  /// before each use (`no-cache`): most of them conditional, revalidations.
  public var expired = 0
  /// Requests sent to the origin because their own directives asked for it (`no-cache`,
  /// `max-age=0`, ...).
  public var requestForwards = 0
  /// Requests answered, without asking the origin, by a response the cache made itself (a 504
  /// for `only-if-cached` when nothing fresh is stored).
  public var generated = 0
  /// Requests the cache does not answer (methods other than `GET`, and `Range` requests), sent
  /// to the origin.
  public var bypassed = 0
  /// Stale responses served after the origin failed or answered with an error status
  /// (`stale-if-error`, or a cache allowed to serve stale when disconnected).
  public var staleIfError = 0
  /// Revalidations (conditional requests, in the foreground or background) the origin answered
  /// with 304 Not Modified: the stored response was freshened.
  public var revalidatedNotModified = 0
  /// Revalidations the origin answered with a new response.
  public var revalidatedReplaced = 0
  /// Revalidations that failed: no response from the origin (cancellations aside), or an error
  /// status (500, 502, 503, 504).
  public var revalidationFailures = 0
  /// Responses written to the store (new ones and freshened ones).
  public var stores = 0
  /// The bytes written to the store, encoded entries with every `Vary` variant.
  public var storedBytes = 0
  /// Writes the store refused (the response stays unstored).
  public var storeFailures = 0
  /// URLs whose stored responses were removed: after an unsafe method, or by ``HTTPCache/invalidate(_:)``.
  public var invalidations = 0
  /// Stored entries that could not be decoded (corrupt or foreign bytes), removed as misses.
  public var corruptEntries = 0
  /// Forwarded requests answered by the response another process (sharing a `LeasingStore`)
  /// fetched and stored while they waited: the origin requests ``RequestCollapsing`` saved.
  public var collapsedResponses = 0
  /// Leases taken after waiting: the holder failed, died, or got a response it could not
  /// store, and this process asked the origin itself.
  public var collapseTakeovers = 0
  /// Waits that ran past ``RequestCollapsing/waitTimeout``: the process asked the origin
  /// without the lease.
  public var collapseWaitTimeouts = 0

  /// Creates statistics, all zero.
  public init() {}
}

/// The live counters behind ``HTTPCacheStatistics``: relaxed atomic adds.
enum HTTPCacheCounter: Int, CaseIterable {
  case hits, staleHits, misses, expired, requestForwards, generated, bypassed, staleIfError
  case revalidatedNotModified, revalidatedReplaced, revalidationFailures
  case stores, storedBytes, storeFailures, invalidations, corruptEntries
  case collapsedResponses, collapseTakeovers, collapseWaitTimeouts
}

extension HTTPCacheStatistics {
  init(_ counters: AtomicCounters<HTTPCacheCounter>) {
    hits = counters[.hits]
    staleHits = counters[.staleHits]
    misses = counters[.misses]
    expired = counters[.expired]
    requestForwards = counters[.requestForwards]
    generated = counters[.generated]
    bypassed = counters[.bypassed]
    staleIfError = counters[.staleIfError]
    revalidatedNotModified = counters[.revalidatedNotModified]
    revalidatedReplaced = counters[.revalidatedReplaced]
    revalidationFailures = counters[.revalidationFailures]
    stores = counters[.stores]
    storedBytes = counters[.storedBytes]
    storeFailures = counters[.storeFailures]
    invalidations = counters[.invalidations]
    corruptEntries = counters[.corruptEntries]
    collapsedResponses = counters[.collapsedResponses]
    collapseTakeovers = counters[.collapseTakeovers]
    collapseWaitTimeouts = counters[.collapseWaitTimeouts]
  }
}

extension HTTPCache: CountingSource {
  /// What the cache did, as ``statistics`` counts it, plus the revalidations running now,
  /// named for export:
  ///
  /// | Name | Kind | Dimensions | Meaning |
  /// |---|---|---|---|
  /// | `kiln_http_cache_lookups_total` | counter | `result`: `hit`, `stale_hit`, `miss`, `expired`, `request`, `generated`, `bypass` | how each request was answered |
  /// | `kiln_http_cache_stale_if_error_total` | counter | | stale responses served after an origin failure |
  /// | `kiln_http_cache_revalidations_total` | counter | `outcome`: `not_modified`, `replaced`, `failed` | how revalidations ended (`failed`: no response, or an error status) |
  /// | `kiln_http_cache_stores_total` | counter | | responses written |
  /// | `kiln_http_cache_stored_bytes_total` | counter | | bytes written |
  /// | `kiln_http_cache_store_failures_total` | counter | | writes refused by the store |
  /// | `kiln_http_cache_invalidations_total` | counter | | URLs invalidated |
  /// | `kiln_http_cache_corrupt_entries_total` | counter | | undecodable entries removed |
  /// | `kiln_http_cache_collapsed_total` | counter | `outcome`: `reused`, `took_over`, `timed_out` | forwarded requests that waited for another process's: answered by its response, took the lease over, or gave up waiting |
  /// | `kiln_http_cache_revalidations_in_flight` | gauge | | background revalidations running |
  public func counterReadings() -> [CounterReading] {
    let s = statistics
    let lookups = "kiln_http_cache_lookups_total"
    let revalidations = "kiln_http_cache_revalidations_total"
    return [
      CounterReading(lookups, [("result", "hit")], value: s.hits),
      CounterReading(lookups, [("result", "stale_hit")], value: s.staleHits),
      CounterReading(lookups, [("result", "miss")], value: s.misses),
      CounterReading(lookups, [("result", "expired")], value: s.expired),
      CounterReading(lookups, [("result", "request")], value: s.requestForwards),
      CounterReading(lookups, [("result", "generated")], value: s.generated),
      CounterReading(lookups, [("result", "bypass")], value: s.bypassed),
      CounterReading("kiln_http_cache_stale_if_error_total", value: s.staleIfError),
      CounterReading(revalidations, [("outcome", "not_modified")], value: s.revalidatedNotModified),
      CounterReading(revalidations, [("outcome", "replaced")], value: s.revalidatedReplaced),
      CounterReading(revalidations, [("outcome", "failed")], value: s.revalidationFailures),
      CounterReading("kiln_http_cache_stores_total", value: s.stores),
      CounterReading("kiln_http_cache_stored_bytes_total", value: s.storedBytes),
      CounterReading("kiln_http_cache_store_failures_total", value: s.storeFailures),
      CounterReading("kiln_http_cache_invalidations_total", value: s.invalidations),
      CounterReading("kiln_http_cache_corrupt_entries_total", value: s.corruptEntries),
      CounterReading("kiln_http_cache_collapsed_total", [("outcome", "reused")], value: s.collapsedResponses),
      CounterReading("kiln_http_cache_collapsed_total", [("outcome", "took_over")], value: s.collapseTakeovers),
      CounterReading("kiln_http_cache_collapsed_total", [("outcome", "timed_out")], value: s.collapseWaitTimeouts),
      CounterReading("kiln_http_cache_revalidations_in_flight", value: revalidationsInFlight, kind: .gauge),
    ]
  }
}
