import Foundation
public import _KilnSynchronization

/// Carries out what one param's ``FlowStateMachine`` decides: emits its states, runs its
/// fetches and page loads, reads the cache for it, and writes the cache in the order of the
/// state changes (so the cache ends with what the state shows).
///
/// It decides nothing itself: every change of state is an event of the machine, and every
/// effect is one of the machine's actions. What is read off the actor (by a new subscriber,
/// by the end of a subscription) is ``mirror``, derived from the machine in one place
/// (``syncMirror()``); leases and the release of an idle param are ``FlowLifetime``'s.
@usableFromInline
actor FlowCoordinator<Param: Hashable & Sendable, Data: Sendable> {
  @usableFromInline typealias Fetch = @Sendable (Param, Data?) async throws -> Data
  typealias FetchTask = Task<Result<Data, any Error>, Never>
  private typealias Machine = FlowStateMachine<Data>

  @usableFromInline nonisolated let param: Param
  /// The cacher, and whether it reads in place (then new subscribers may skip the actor
  /// altogether: ``showsValidCache(_:)``). Given by whoever built the coordinator.
  @usableFromInline nonisolated let source: FlowSource<Param, Data>
  nonisolated var cacher: any Cacher<Param, Data> { source.cacher }
  @usableFromInline nonisolated let registry: FlowRegistry<Param, Data>
  /// The subscribers, each with the fetch of the flowable it subscribed through: an
  /// invalidation refetches with the newest one's, and nothing of theirs is kept once they leave.
  @usableFromInline nonisolated let broadcaster = Broadcaster<Data, Fetch>()
  /// The machine's state as read off the actor.
  @usableFromInline nonisolated let mirror = KilnMutex(FlowMirror())
  /// Leases, and when the param is released once idle.
  private nonisolated let lifetime: FlowLifetime

  private var machine: Machine
  /// What ``mirror`` holds, kept here to take its lock only for a change.
  private var mirrored = FlowMirror()
  /// The task of the machine's fetch in flight.
  private var fetchTask: (generation: UInt64, task: FetchTask)?
  /// The cache writes, in the order of the state changes.
  private let writes: CacheWriteQueue<Param, Data>

  @usableFromInline
  init(param: Param, source: FlowSource<Param, Data>, registry: FlowRegistry<Param, Data>) {
    self.param = param
    self.source = source
    self.registry = registry
    writes = CacheWriteQueue(cacher: source.cacher, param: param)
    machine = Machine(canSettle: source.memoryCacher != nil, paging: source.paging)
    lifetime = FlowLifetime(releaseDelay: registry.releaseDelay, clock: registry.releaseClock)
    lifetime.onDue { [weak self] in await self?.releaseIfIdle() }
    broadcaster.onEmpty { [weak self] in self?.lastSubscriberLeft() }
  }

  // MARK: - Carrying out

  /// Carries out `actions` (starting a fetch with `fetch`) and mirrors the machine.
  ///
  /// - Returns: The cache write enqueued, if any: await it with ``finish(_:)``.
  @discardableResult
  private func perform(_ actions: Machine.Actions, fetch: Fetch? = nil) -> Task<Void, Never>? {
    if let snapshot = actions.emit { broadcaster.emit(snapshot) }
    if let generation = actions.cancel, let current = fetchTask, current.generation == generation {
      current.task.cancel()
    }
    // A fetch the machine no longer waits for (cancelled or superseded) is forgotten; a
    // superseded one runs on, and its result is ignored.
    if let current = fetchTask, current.generation != machine.fetchGeneration { fetchTask = nil }
    if let start = actions.start {
      guard let fetch else { preconditionFailure("FlowStateMachine started a fetch without a fetcher") }
      startTask(start, fetch)
    }
    let written = actions.write.map { writes.enqueue($0.data, cachedAt: $0.cachedAt) }
    syncMirror()
    return written
  }

  private func startTask(_ start: Machine.FetchStart, _ fetch: @escaping Fetch) {
    let param = self.param
    let task = FetchTask {
      let result = await Result(awaiting: { try await fetch(param, start.stale) })
      await self.fetchFinished(start.generation, result)
      return result
    }
    fetchTask = (start.generation, task)
  }

  private func fetchFinished(_ generation: UInt64, _ result: Result<Data, any Error>) async {
    await finish(perform(machine.fetchFinished(generation, result, now: cacher.now())))
    scheduleReleaseIfIdle()
  }

  /// Waits for a write that ``perform(_:fetch:)`` enqueued, and tells the machine it ended.
  private func finish(_ write: Task<Void, Never>?) async {
    guard let write else { return }
    await write.value
    writes.ended(write)
    machine.writeFinished()
    syncMirror()
  }

  /// Waits for the fetch in flight as one of its waiters: when the last waiter is cancelled
  /// and nobody observes, the fetch is cancelled (per the registry's policy).
  private func waitForFetch() async -> Result<Data, any Error> {
    guard let (generation, task) = fetchTask else { return .failure(CancellationError()) }
    machine.waiterJoined(generation)
    defer { machine.waiterLeft(generation) }
    return await withTaskCancellationHandler {
      await task.value
    } onCancel: {
      // The cancelled waiter counts until the task answers it: cancel when it is the only one.
      Task { await self.abandonFetchIfUnobserved(generation, leavingWaiters: 1) }
    }
  }

  /// Copies what is read off the actor to ``mirror``, when it changed.
  private func syncMirror() {
    let current = FlowMirror(settledAt: machine.settledAt, fetching: machine.fetch != nil, busy: !machine.isQuiet)
    guard current != mirrored else { return }
    mirrored = current
    mirror.withLock { $0 = current }
  }

  // MARK: - Reading the cache

  /// Reads the cache after every write enqueued so far.
  private func readCache() async -> Machine.CacheReading {
    if let pending = writes.pending { await pending.value }
    if let reading = source.readInPlace(param, registry: registry) { return reading }
    return await source.read(param, registry: registry)
  }

  /// Shows the cache when there is no state yet (before a forced fetch or a page request).
  private func readInitial() async {
    let token = machine.generation
    machine.initialRead(await readCache(), token: token)
  }

  /// Brings the state up to date with the cache, fetching with `fetch` when it is empty,
  /// expired or invalidated.
  ///
  /// - Returns: Whether a fetch is in flight to wait for.
  private func ensureValid(_ fetch: @escaping Fetch) async -> Bool {
    if machine.fetch != nil { return true }
    let token = machine.generation
    let (actions, validation) = machine.validationRead(await readCache(), token: token)
    perform(actions, fetch: fetch)
    return validation == .wait
  }

  // MARK: - Operations

  /// A new subscriber arrived: validate (or refetch) without waiting for the fetch.
  func activate(forceRefresh: Bool, fetch: @escaping Fetch) async {
    if forceRefresh {
      // Read the cache first so the stale content shows while the refetch runs.
      if !machine.hasState, machine.fetch == nil { await readInitial() }
      perform(machine.startFetch(), fetch: fetch)
    } else {
      _ = await ensureValid(fetch)
    }
  }

  /// Validates and waits for the fetch it needs, if any.
  func validate(fetch: @escaping Fetch) async {
    if await ensureValid(fetch) { _ = await waitForFetch() }
  }

  /// Fetches again (superseding any fetch in flight) and waits.
  @discardableResult
  func refresh(fetch: @escaping Fetch) async -> Result<Data, any Error> {
    perform(machine.startFetch(), fetch: fetch)
    return await waitForFetch()
  }

  /// Valid data from where `from` says.
  func require(from: GettingFrom, fetch: @escaping Fetch) async throws -> Data {
    switch from {
    case .origin:
      return try await refresh(fetch: fetch).get()
    case .cache:
      guard let data = machine.validCached(await readCache()) else { throw NoSuchElementError() }
      return data
    case .both:
      if machine.fetch == nil {
        let reading = await readCache()
        if machine.fetch == nil, let data = machine.validCached(reading) { return data }
      }
      if machine.fetch == nil { perform(machine.startFetch(), fetch: fetch) }
      return try await waitForFetch().get()
    }
  }

  /// Replaces the content (newest wins over any fetch in flight); `nil` clears it.
  func update(_ data: Data?) async {
    await finish(perform(machine.update(data, now: cacher.now())))
  }

  /// Marks the content stale; refetches now, with the newest subscriber's fetch, when
  /// someone observes it.
  func invalidate() {
    let fetch = broadcaster.latestTag
    perform(machine.invalidate(canFetch: fetch != nil), fetch: fetch)
    // The last subscriber may have left meanwhile, before the mirror said a fetch was in
    // flight: cancel the fetch as the end of its subscription would have.
    if fetch != nil { abandonFetchIfUnobserved() }
  }

  /// Loads an additional page with `load` (which returns the new content, or `nil` when the
  /// answer no longer fits the content).
  func requestAdditional(
    _ direction: PageDirection,
    continueWhenError: Bool,
    load: @Sendable (Data) -> (@Sendable () async throws -> @Sendable (Data) -> Data?)?
  ) async -> AdditionalRequestResult {
    if !machine.hasState { await readInitial() }
    let content: Data
    switch machine.pageRequest(direction, continueWhenError: continueWhenError) {
    case .done(let result): return result
    case .proceed(let current): content = current
    }
    guard let request = load(content) else { return .skipped(.noMoreData) }
    let (token, started) = machine.pageStarted(direction)
    perform(started)
    let result: Result<(Data) -> Data?, any Error> = await Result(awaiting: request)
    let (outcome, finished) = machine.pageFinished(direction, token: token, result, now: cacher.now())
    await finish(perform(finished))
    return outcome
  }

  // MARK: - Subscribers, leases and release

  /// Takes a lease; call ``endLease()`` when done.
  nonisolated func lease() -> Self {
    lifetime.lease()
    return self
  }

  /// Ends a lease; the last one schedules the release of an idle coordinator.
  func endLease() {
    if lifetime.endLease() { scheduleReleaseIfIdle() }
  }

  /// No lease and no subscriber (checked by the registry under its lock).
  nonisolated var isUnused: Bool {
    !lifetime.isLeased && broadcaster.subscriberCount == 0
  }

  private func scheduleReleaseIfIdle() {
    if machine.isQuiet, isUnused { lifetime.scheduleRelease() }
  }

  /// Releases this param if it is idle and no release was scheduled again since this one
  /// fell due.
  private func releaseIfIdle() {
    guard machine.isQuiet, !lifetime.isReleaseScheduled else { return }
    _ = registry.release(param, self)
  }

  /// The broadcaster lost its last subscriber (called on the thread that removed it). Hops
  /// onto the actor only to cancel a fetch nobody waits for; otherwise schedules the release
  /// in place (the actor schedules it itself when it becomes idle later).
  private nonisolated func lastSubscriberLeft() {
    let (fetching, busy) = mirror.withLock { ($0.fetching, $0.busy) }
    if fetching, registry.abandonedFetch == .cancel {
      Task { await self.abandonFetchIfUnobserved() }
    } else if !busy, !lifetime.isLeased {
      // No subscriber (just removed; one arriving now finds the release not due, since
      // the release checks again that the param is idle and unused).
      lifetime.scheduleRelease()
    }
  }

  /// Cancels the fetch in flight (of `generation`, if given) if nobody observes it and no
  /// other caller waits for it (per the registry's policy), then schedules the release if idle.
  private func abandonFetchIfUnobserved(_ generation: UInt64? = nil, leavingWaiters: Int = 0) {
    if registry.abandonedFetch == .cancel, broadcaster.subscriberCount == 0 {
      perform(machine.abandonFetch(generation, leavingWaiters: leavingWaiters))
    }
    scheduleReleaseIfIdle()
  }
}
