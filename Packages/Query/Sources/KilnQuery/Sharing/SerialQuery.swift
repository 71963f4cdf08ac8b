/// A query whose concurrent loads share one load of its upstream.
///
/// Create one with ``KilnCore/Query/serial()``.
@frozen
public struct SerialQuery<Upstream: Query>: Query {
  public typealias Success = Upstream.Success
  public typealias Failure = Upstream.Failure

  /// The query whose loads are shared.
  public let upstream: Upstream

  @usableFromInline
  let slot: FlightSlot<Success, Failure>

  @inlinable
  init(upstream: Upstream) {
    self.upstream = upstream
    self.slot = FlightSlot()
  }

  @inlinable
  public func load() async throws(Failure) -> Success {
    let upstream = upstream
    return try await slot.load(making: { { await upstream.result() } }).get()
  }
}

extension SerialQuery {
  /// The number of callers waiting for the load in flight now; zero when none is.
  var waiterCount: Int {
    slot.waiterCount
  }

  /// Whether a load is in flight that new callers would join.
  public var isLoading: Bool {
    slot.isLoading
  }
}

extension Query {
  /// Makes concurrent loads share one load of this query (Bricks' `DemultiplyingQuery`).
  ///
  /// The first caller starts the load; callers arriving while it runs join it and all get the
  /// same outcome. A caller arriving after it finished starts a new load: nothing is cached.
  ///
  /// ```swift
  /// let profile = ProfileQuery().serial()
  /// async let header = profile.load()
  /// async let menu = profile.load()          // joins the first request
  /// let (a, b) = try await (header, menu)    // one request, the same profile
  /// ```
  ///
  /// The shared load runs in its own task, so cancelling one caller never cancels it: that
  /// caller stops waiting (with `CancellationError` when `Failure` can hold one; otherwise it
  /// still gets the outcome). The shared load is cancelled only when every caller waiting for
  /// it has been cancelled. Loads never overlap: when a cancelled load ignores its
  /// cancellation and runs on, the next caller's load starts once it has ended.
  ///
  /// The shared load runs at the priority of the caller who started it, raised to that of
  /// any caller with a higher one who joins it (on Linux, and on Apple platforms from the
  /// 26 releases, where `Task.escalatePriority(to:)` exists).
  ///
  /// - Important: Copies of the returned query share their loads; two calls of `serial()`
  ///   make two independent queries. Keep the one you made.
  /// - Returns: A query that shares its concurrent loads.
  @inlinable
  public func serial() -> SerialQuery<Self> {
    SerialQuery(upstream: self)
  }
}
