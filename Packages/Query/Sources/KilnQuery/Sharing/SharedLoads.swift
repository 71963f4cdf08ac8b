// Public: the load path is inlinable, so its lock and counters are specialised in the caller's module.
public import Synchronization
public import _KilnSynchronization

/// A registry of loads in flight by key: single flight across many queries.
///
/// Every query decorated with ``KilnCore/Query/shared(by:in:)`` and the same registry and key joins the
/// load already in flight for that key instead of starting its own. Share one registry between
/// the places that load the same resources — a repository, a view model per screen, a network
/// layer:
///
/// ```swift
/// let loads = SharedLoads<Int>()
///
/// func article(_ id: Int) -> some Query<Article, any Error> {
///   ArticleQuery(id: id).shared(by: id, in: loads)
/// }
///
/// async let first = article(7).load()
/// async let second = article(7).load()    // joins the first request
/// let (a, b) = try await (first, second)
/// ```
///
/// Loads of one key with different `Success` or `Failure` types never share: the registry
/// keys each flight by the key *and* by its result type.
///
/// Nothing is cached: once a load finishes, the next caller for its key starts a new one.
/// A load in flight is cancelled only when every caller waiting for it has been cancelled.
/// One key never has two loads running at once: when the cancelled load ignores its
/// cancellation and runs on, the next caller's load starts once it has ended.
///
/// - Important: All queries that use one key must load the same resource: the registry cannot
///   tell two different queries apart, and a caller may get the result of a query built by
///   another caller with the same key.
public final class SharedLoads<Key: Hashable & Sendable>: Sendable {
  @usableFromInline
  struct FlightKey: Hashable, Sendable {
    @usableFromInline let key: Key
    @usableFromInline let output: ObjectIdentifier

    @inlinable
    init(key: Key, output: ObjectIdentifier) {
      self.key = key
      self.output = output
    }
  }

  // Internal rather than private, for the inlinable load path (see `outcome(for:using:)`).
  @usableFromInline let flights = KilnMutex<[FlightKey: any Sendable & AnyObject]>([:])
  @usableFromInline let started = Atomic<Int>(0)
  @usableFromInline let joined = Atomic<Int>(0)

  /// Creates an empty registry.
  public init() {}

  /// How many loads callers started since the registry was created: one per flight.
  public var startedCount: Int {
    started.load(ordering: .relaxed)
  }

  /// How many callers joined a load already in flight instead of starting one, since the
  /// registry was created: the loads single flight saved.
  public var joinedCount: Int {
    joined.load(ordering: .relaxed)
  }

  /// The number of loads in flight now, across all keys.
  public var inFlightCount: Int {
    flights.withLock { $0.count }
  }

  /// Whether a load of `key` is in flight now.
  ///
  /// - Parameter key: The key to look up.
  /// - Returns: `true` from the moment a caller starts a load of `key` until it finishes.
  public func isLoading(_ key: Key) -> Bool {
    flights.withLock { flights in flights.keys.contains { $0.key == key } }
  }

  /// Joins the load of `key` in flight, or starts `query` as a new one, and returns its
  /// outcome.
  ///
  /// Most code uses ``KilnCore/Query/shared(by:in:)`` instead.
  ///
  /// - Parameters:
  ///   - key: What the load is for.
  ///   - query: The query to run when no load of `key` with the same result type is in flight.
  /// - Returns: The value loaded by the flight this call joined.
  /// - Throws: The flight's failure; `CancellationError` when `Failure` can hold it and this
  ///   caller's task is cancelled.
  @inlinable
  public func load<Upstream: Query>(
    _ key: Key,
    using query: Upstream
  ) async throws(Upstream.Failure) -> Upstream.Success {
    try await outcome(for: key, using: query).get()
  }

  /// The number of callers waiting for the load of `key` (with the given result type) now.
  package func waiterCount<Success: Sendable, Failure: Error>(_ key: Key, _: Result<Success, Failure>.Type) -> Int {
    let flight = flights.withLock { flights in
      flights[FlightKey(key: key, output: ObjectIdentifier(Result<Success, Failure>.self))]
    }
    return (flight as? Flight<Success, Failure>)?.waiterCount ?? 0
  }

  /// The priority the load of `key` (with the given result type) runs at, as its callers
  /// know it: its starter's, or a higher one a caller raised it to; `nil` when none is in
  /// flight or nobody joined an inline load yet.
  package func loadPriority<Success: Sendable, Failure: Error>(
    _ key: Key, _: Result<Success, Failure>.Type
  ) -> TaskPriority? {
    let flight = flights.withLock { flights in
      flights[FlightKey(key: key, output: ObjectIdentifier(Result<Success, Failure>.self))]
    }
    return (flight as? Flight<Success, Failure>)?.loadPriority
  }

  /// Whether the load of `key` (with the given result type) waits for an abandoned load,
  /// still running, to end before it runs.
  func waitsForAbandonedLoad<Success: Sendable, Failure: Error>(_ key: Key, _: Result<Success, Failure>.Type) -> Bool {
    let flight = flights.withLock { flights in
      flights[FlightKey(key: key, output: ObjectIdentifier(Result<Success, Failure>.self))]
    }
    return (flight as? Flight<Success, Failure>)?.waitsForPredecessor ?? false
  }

  /// What ``load(_:using:)`` returns, as a `Result`.
  ///
  /// `@inlinable`, with ``Flight``'s join path, so that it specialises in the caller's module
  /// for the caller's query: unspecialised, a quarter of a shared load (KilnNetwork's
  /// `Deduplicating`) went to generic metadata lookups.
  @inlinable
  func outcome<Upstream: Query>(
    for key: Key,
    using query: Upstream
  ) async -> Result<Upstream.Success, Upstream.Failure> {
    typealias SharedFlight = Flight<Upstream.Success, Upstream.Failure>
    if let cancellation = SharedFlight.cancellationIfCancelled { return .failure(cancellation) }
    let flightKey = FlightKey(key: key, output: ObjectIdentifier(Result<Upstream.Success, Upstream.Failure>.self))
    let admission = flights.withLock { flights in
      let admission = SharedFlight.admit(to: flights[flightKey] as? SharedFlight)
      if admission.isNew { flights[flightKey] = admission.flight }
      return admission
    }
    return await wait(admission, running: query, for: flightKey)
  }

  /// Joins the load of `key` in flight or, when none is, runs `query` in the calling task
  /// while later callers join it; returns the outcome.
  ///
  /// The first caller runs the load as a plain call would, and pays no task: KilnNetwork's
  /// `Deduplicating` stage. What changes against ``load(_:using:)`` is what cancelling that
  /// caller does: it cancels the load it runs. When the load then fails while callers who
  /// joined still wait, they get a new load, in a task of its own, started once the first has
  /// ended (loads of one key never overlap); when it succeeds anyway, they get its value.
  /// Callers who joined and are cancelled leave at once, as with ``load(_:using:)``.
  ///
  /// - Parameters:
  ///   - key: What the load is for.
  ///   - query: The query to run when no load of `key` with the same result type is in flight.
  /// - Returns: The value loaded by the flight this call joined or ran.
  /// - Throws: The flight's failure; `CancellationError` when `Failure` can hold it and this
  ///   caller's task is cancelled.
  @inlinable
  package func loadInline<Upstream: Query>(
    _ key: Key,
    using query: Upstream
  ) async throws(Upstream.Failure) -> Upstream.Success {
    try await inlineOutcome(for: key, using: query).get()
  }

  /// What ``loadInline(_:using:)`` returns, as a `Result`.
  @inlinable
  func inlineOutcome<Upstream: Query>(
    for key: Key,
    using query: Upstream
  ) async -> Result<Upstream.Success, Upstream.Failure> {
    typealias SharedFlight = Flight<Upstream.Success, Upstream.Failure>
    // One look at the current task: its cancellation now, and its priority for joiners.
    let (task, isCancelled) = withUnsafeCurrentTask { (LeaderTask($0), $0?.isCancelled ?? false) }
    if isCancelled, let cancellation = CancellationError() as? Upstream.Failure {
      return .failure(cancellation)
    }
    let flightKey = FlightKey(key: key, output: ObjectIdentifier(Result<Upstream.Success, Upstream.Failure>.self))
    // Lead (a new flight that the caller runs itself, stored for joiners), join, or — after an
    // abandoned load still running — start a flight of its own that runs after it.
    let (led, admission) = flights.withLock { flights -> (SharedFlight?, SharedFlight.Admission?) in
      let current = flights[flightKey] as? SharedFlight
      if current == nil, let task {
        let flight = SharedFlight(leader: task)
        flights[flightKey] = flight
        return (flight, nil)
      }
      let admission = SharedFlight.admit(to: current)
      if admission.isNew { flights[flightKey] = admission.flight }
      return (nil, admission)
    }
    guard let flight = led else { return await wait(admission!, running: query, for: flightKey) }
    started.add(1, ordering: .relaxed)
    FlightProbe.report(.joined)
    FlightProbe.report(.started)
    FlightProbe.report(.waiting)
    let outcome = await query.result()
    // The callers who joined need a load of their own when the leader was cancelled and its
    // load failed (perhaps because of it).
    let needsHandOver: Bool
    if case .failure = outcome { needsHandOver = Task.isCancelled } else { needsHandOver = false }
    let restarts = flights.withLock { flights in
      if needsHandOver, flight.handOver() { return true }  // stays: it runs a load of its own now
      if flights[flightKey] === flight { flights[flightKey] = nil }
      return false
    }
    if restarts {
      started.add(1, ordering: .relaxed)  // a load of its own: counted as one
      start(flight, running: query, for: flightKey)
    } else {
      flight.finish(outcome)
    }
    FlightProbe.report(.ended)
    return outcome
  }

  /// Waits for the flight `admission` admitted this caller to, starting it first when it is
  /// new: the path of every caller of ``load(_:using:)``, and of ``loadInline(_:using:)``'s
  /// callers who do not lead. Not inlined, so that an inline leader's path keeps a small frame.
  @inlinable
  @inline(never)
  func wait<Upstream: Query>(
    _ admission: Flight<Upstream.Success, Upstream.Failure>.Admission,
    running query: Upstream,
    for flightKey: FlightKey
  ) async -> Result<Upstream.Success, Upstream.Failure> {
    if admission.isNew {
      started.add(1, ordering: .relaxed)
      start(admission.flight, after: admission.predecessor, running: query, for: flightKey)
    } else {
      joined.add(1, ordering: .relaxed)
    }
    return await admission.flight.wait(admission.slot)
  }

  /// Starts `flight`'s load of `query` in a task of its own, after `predecessor`; the flight
  /// leaves the registry when it ends.
  @inlinable
  func start<Upstream: Query>(
    _ flight: Flight<Upstream.Success, Upstream.Failure>,
    after predecessor: Flight<Upstream.Success, Upstream.Failure>? = nil,
    running query: Upstream,
    for flightKey: FlightKey
  ) {
    flight.start(
      after: predecessor, { await query.result() }, onFinish: { [self] flight in remove(flight, for: flightKey) })
  }

  @inlinable
  func remove(_ flight: AnyObject, for key: FlightKey) {
    flights.withLock { flights in
      if flights[key] === flight { flights[key] = nil }
    }
  }
}

extension SharedLoads: CountingSource {
  /// The flights as counters: `kiln_single_flight_loads_total` (`role`: `started` for the
  /// loads run, `joined` for the callers that waited for one in flight instead) and the gauge
  /// `kiln_single_flight_in_flight`. Register each `SharedLoads` under a name of its own.
  public func counterReadings() -> [CounterReading] {
    [
      CounterReading("kiln_single_flight_loads_total", [("role", "started")], value: startedCount),
      CounterReading("kiln_single_flight_loads_total", [("role", "joined")], value: joinedCount),
      CounterReading("kiln_single_flight_in_flight", value: inFlightCount, kind: .gauge),
    ]
  }
}
