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
    try await slot.loadInline(upstream).get()
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
  /// The first caller runs the load itself, in its own task, as a plain call of the upstream
  /// would: a caller who finds no load to join pays no task and no hop. Callers who join it
  /// wait for its outcome:
  ///
  /// - A joining caller who is cancelled stops waiting at once (with `CancellationError` when
  ///   `Failure` can hold one; otherwise it still gets the outcome). The load goes on.
  /// - The first caller's cancellation reaches the load, since the load runs in its task: it
  ///   gets whatever the upstream returns when cancelled, and waits for the upstream as long
  ///   as a plain call would. When the load then fails while joined callers still wait, they
  ///   get a new load, run in a task of its own, instead of that failure; when it succeeds
  ///   anyway, they get its value. Such a new load is cancelled only when every caller
  ///   waiting for it has been cancelled.
  /// - Loads never overlap: a new load starts only once the one before it has ended, also when
  ///   a cancelled load ignores its cancellation and runs on.
  ///
  /// A joining caller with a higher priority than the load raises the load's priority to its
  /// own (on Linux, and on Apple platforms from the 26 releases, where
  /// `Task.escalatePriority(to:)` exists).
  ///
  /// - Important: Copies of the returned query share their loads; two calls of `serial()`
  ///   make two independent queries. Keep the one you made.
  /// - Returns: A query that shares its concurrent loads.
  @inlinable
  public func serial() -> SerialQuery<Self> {
    SerialQuery(upstream: self)
  }
}
