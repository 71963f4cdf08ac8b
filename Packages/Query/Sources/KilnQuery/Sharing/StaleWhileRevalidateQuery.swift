public import Foundation

/// A query that serves a cached value at once — even a stale one — and refreshes it from a
/// source in the background, with at most one refresh in flight.
///
/// Create one with ``KilnCore/Storage/staleWhileRevalidate(from:validationPolicy:stalePolicy:now:onRefresh:onSaveError:)``.
@frozen
public struct StaleWhileRevalidateQuery<
  Cache: Storage,
  Source: Query,
  Freshness: ValidationPolicy,
  Staleness: ValidationPolicy
>: Query where Source.Success == Cache.Value {
  public typealias Success = Cache.Value
  public typealias Failure = Source.Failure

  /// Where values are read from and refreshed into.
  public let cache: Cache

  /// Where fresh values come from.
  public let source: Source

  /// Whether a cached value is fresh: served without a refresh.
  public let validationPolicy: Freshness

  /// Whether a value that is no longer fresh may still be served while it is refreshed.
  public let stalePolicy: Staleness

  @usableFromInline
  let now: @Sendable () -> Date

  @usableFromInline
  let onRefresh: (@Sendable (Result<Success, Failure>) -> Void)?

  @usableFromInline
  let onSaveError: (@Sendable (any Error) -> Void)?

  @usableFromInline
  let slot: FlightSlot<Success, Failure>

  @inlinable
  init(
    cache: Cache,
    source: Source,
    validationPolicy: Freshness,
    stalePolicy: Staleness,
    now: @escaping @Sendable () -> Date,
    onRefresh: (@Sendable (Result<Success, Failure>) -> Void)?,
    onSaveError: (@Sendable (any Error) -> Void)?
  ) {
    self.cache = cache
    self.source = source
    self.validationPolicy = validationPolicy
    self.stalePolicy = stalePolicy
    self.now = now
    self.onRefresh = onRefresh
    self.onSaveError = onSaveError
    self.slot = FlightSlot()
  }

  /// Serves the cached value when it is fresh; a stale but usable one at once while a
  /// refresh starts in the background; otherwise waits for a refresh.
  ///
  /// - Throws: The source's failure, when no usable value is cached and the refresh fails.
  ///   A cache that cannot be read counts as empty.
  @inlinable
  public func load() async throws(Failure) -> Success {
    if let timestamp = await cache.timestamp {
      let now = now()
      let isFresh = validationPolicy.isValid(timestamp: timestamp, now: now)
      if isFresh || stalePolicy.isValid(timestamp: timestamp, now: now), let value = try? await cache.load() {
        if !isFresh { slot.startInBackground(refreshOperation) }
        return value
      }
    }
    return try await slot.load(refreshOperation).get()
  }

  /// Refreshes from the source now and returns the new value, joining a refresh already in
  /// flight.
  ///
  /// The refresh is cancelled when every caller waiting for it is — unless a stale value
  /// was served while it ran: it then runs to its end, as a background refresh does.
  ///
  /// - Returns: The refreshed value, saved in the cache.
  /// - Throws: The source's failure.
  @inlinable
  public func refresh() async throws(Failure) -> Success {
    try await slot.load(refreshOperation).get()
  }

  /// Whether a refresh is in flight now.
  public var isRefreshing: Bool {
    slot.isLoading
  }

  @usableFromInline
  var refreshOperation: @Sendable () async -> Result<Success, Failure> {
    { [source, cache, onRefresh, onSaveError] in
      let result = await source.result()
      if case .success(let value) = result {
        do {
          try await cache.save(value)
        } catch {
          onSaveError?(error)
        }
      }
      onRefresh?(result)
      return result
    }
  }
}

extension Storage {
  /// Serves this storage's value at once — even a stale one — and refreshes it from `source`
  /// in the background (RFC 5861's *stale-while-revalidate*, for any query).
  ///
  /// ```swift
  /// let feed = cache.staleWhileRevalidate(
  ///   from: network,
  ///   validationPolicy: .maxAge(.seconds(60)),    // fresh for a minute
  ///   stalePolicy: .maxAge(.seconds(86_400))         // then served while refreshing, for a day
  /// )
  /// ```
  ///
  /// Each load:
  /// - **fresh** value (`validationPolicy` accepts its timestamp): returned; no refresh.
  /// - **stale but usable** (`stalePolicy` accepts it): returned at once, and a refresh
  ///   starts in the background unless one is already in flight.
  /// - **nothing usable** (empty, too old, or unreadable): the load waits for a refresh —
  ///   joining the one in flight, if any — and returns its value or its failure.
  ///
  /// At most one refresh is in flight at any time, whoever started it. A refresh saves its
  /// value into this storage. A background refresh runs to its end even when every caller is
  /// gone; a refresh started by callers who wait for it (a load with nothing usable cached,
  /// ``StaleWhileRevalidateQuery/refresh()``) is cancelled once all of them are — unless a
  /// stale value was served meanwhile: the refresh that value relies on then runs to its end
  /// like a background one. A cancelled refresh whose source ignores the cancellation still
  /// counts as in flight: the next refresh starts once it has ended.
  ///
  /// - Parameters:
  ///   - source: Where fresh values come from.
  ///   - validationPolicy: Whether a value is fresh, from its timestamp.
  ///   - stalePolicy: Whether a value that is not fresh may still be served while it is
  ///     refreshed; any stored value by default.
  ///   - now: The current wall-clock time; inject a manual date in tests.
  ///   - onRefresh: Called after each refresh with its outcome (after saving a value).
  ///   - onSaveError: Called when saving a refreshed value fails.
  /// - Returns: A query that serves cached values and keeps them fresh.
  /// - Important: Copies of the returned query share their refresh; keep the one you made.
  @inlinable
  public func staleWhileRevalidate<Source: Query, Freshness: ValidationPolicy, Staleness: ValidationPolicy>(
    from source: Source,
    validationPolicy: Freshness,
    stalePolicy: Staleness = AlwaysValidPolicy(),
    now: @escaping @Sendable () -> Date = Date.init,
    onRefresh: (@Sendable (Result<Value, Source.Failure>) -> Void)? = nil,
    onSaveError: (@Sendable (any Error) -> Void)? = nil
  ) -> StaleWhileRevalidateQuery<Self, Source, Freshness, Staleness> where Source.Success == Value {
    StaleWhileRevalidateQuery(
      cache: self,
      source: source,
      validationPolicy: validationPolicy,
      stalePolicy: stalePolicy,
      now: now,
      onRefresh: onRefresh,
      onSaveError: onSaveError
    )
  }
}
