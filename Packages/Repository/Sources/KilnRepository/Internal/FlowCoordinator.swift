public import Foundation
public import _KilnSynchronization

/// Carries out what one param's ``FlowStateMachine`` decides (it decides nothing itself):
/// emits its states, runs its fetches and page loads, reads the cache, and writes it in the
/// order of the state changes. What is read off the actor is derived from the machine in one
/// place (``syncMirror()``): ``settledAt`` for new subscribers, and the activity that
/// ``FlowLifetime`` (leases, release of an idle param) needs.
@usableFromInline
actor FlowCoordinator<Param: Hashable & Sendable, Data: Sendable> {
  @usableFromInline typealias Fetch = @Sendable (Param, Data?) async throws -> Data
  private typealias Machine = FlowStateMachine<Data>

  @usableFromInline nonisolated let param: Param
  /// The cacher, and whether it reads in place (then subscribers may skip the actor).
  @usableFromInline nonisolated let source: FlowSource<Param, Data>
  @usableFromInline nonisolated let registry: FlowRegistry<Param, Data>
  /// The subscribers, each with the fetch of the flowable it subscribed through: an
  /// invalidation refetches with the newest one's; nothing of theirs is kept once they leave.
  /// Made by the caller of ``init(param:source:registry:broadcaster:)``, where it is
  /// specialised (see ``Broadcaster/deliver``).
  @usableFromInline nonisolated let broadcaster: Broadcaster<Data, Fetch>
  /// The machine's ``FlowStateMachine/settledAt``, read off the actor by new subscribers.
  @usableFromInline nonisolated let settledAt = KilnMutex<Date?>(nil)
  private nonisolated let lifetime: FlowLifetime

  private var machine: Machine
  /// What the mirrors hold, kept here to take their locks only for a change.
  private var mirrored: (settledAt: Date?, fetching: Bool, busy: Bool) = (nil, false, false)
  /// The task of the machine's fetch in flight.
  private var fetchTask: (generation: UInt64, task: Task<Result<Data, any Error>, Never>)?
  private let writes: CacheWriteQueue<Param, Data>

  @usableFromInline
  init(
    param: Param, source: FlowSource<Param, Data>, registry: FlowRegistry<Param, Data>,
    broadcaster: Broadcaster<Data, Fetch>
  ) {
    self.param = param
    self.broadcaster = broadcaster
    self.source = source
    self.registry = registry
    writes = CacheWriteQueue(cacher: source.cacher, param: param)
    machine = Machine(canSettle: source.memoryCacher != nil, paging: source.paging)
    lifetime = FlowLifetime(releaseDelay: registry.releaseDelay, clock: registry.releaseClock)
    lifetime.onDue { [weak self] in await self?.releaseIfIdle() }
    broadcaster.onEmpty { [weak self] in self?.lastSubscriberLeft() }
  }

  // MARK: - Carrying out

  /// Carries out `actions` (a fetch starts with `fetch`), mirrors the machine, and returns
  /// the cache write enqueued, if any, for ``finish(_:)``.
  @discardableResult
  private func perform(_ actions: Machine.Actions, fetch: Fetch? = nil) -> Task<Void, Never>? {
    if let snapshot = actions.emit {
      registry.counters.add(.emissions)
      broadcaster.emit(snapshot)
    }
    if let generation = actions.cancel, let current = fetchTask, current.generation == generation {
      current.task.cancel()
    }
    // A fetch cancelled or superseded is forgotten; a superseded one runs on, its result ignored.
    if let current = fetchTask, current.generation != machine.fetchGeneration { fetchTask = nil }
    if let start = actions.start {
      guard let fetch else { preconditionFailure("FlowStateMachine started a fetch without a fetcher") }
      let param = self.param
      registry.counters.add(.fetches)
      let task = Task {
        let result = await Result(awaiting: { try await fetch(param, start.stale) })
        await self.fetchFinished(start.generation, result)
        return result
      }
      fetchTask = (start.generation, task)
    }
    let written = actions.write.map { write in
      registry.counters.add(.cacheWrites)
      return writes.enqueue(write.data, cachedAt: write.cachedAt)
    }
    syncMirror()
    return written
  }

  private func fetchFinished(_ generation: UInt64, _ result: Result<Data, any Error>) async {
    if case .success = result {
      registry.counters.add(.fetchSuccesses)
    } else {
      registry.counters.add(.fetchFailures)
    }
    await finish(perform(machine.fetchFinished(generation, result, now: source.cacher.now())))
    scheduleReleaseIfIdle()
  }

  /// Waits for a write ``perform(_:fetch:)`` enqueued; tells the machine it ended.
  private func finish(_ write: Task<Void, Never>?) async {
    guard let write else { return }
    await write.value
    writes.ended(write)
    machine.writeFinished()
    syncMirror()
  }

  /// Waits for the fetch in flight as one of its waiters.
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

  private func syncMirror() {
    let current = (settledAt: machine.settledAt, fetching: machine.fetch != nil, busy: !machine.isQuiet)
    if current.settledAt != mirrored.settledAt { settledAt.withLock { $0 = current.settledAt } }
    if current.fetching != mirrored.fetching || current.busy != mirrored.busy {
      lifetime.setActivity(fetching: current.fetching, busy: current.busy)
    }
    mirrored = current
  }

  // MARK: - Reading the cache

  /// Reads the cache after every write enqueued so far.
  private func readCache() async -> Machine.CacheReading {
    if let pending = writes.pending { await pending.value }
    registry.counters.add(.cacheReads)
    if let reading = source.readInPlace(param, registry: registry) { return reading }
    return await source.read(param, registry: registry)
  }

  /// Shows the cache when there is no state yet (before a forced fetch or a page request).
  private func readInitial() async {
    let token = machine.generation
    machine.initialRead(await readCache(), token: token)
  }

  /// Brings the state up to date with the cache, fetching with `fetch` when it is empty,
  /// expired or invalidated; returns whether a fetch is in flight to wait for.
  private func ensureValid(_ fetch: @escaping Fetch) async -> Bool {
    if machine.fetch != nil { return true }
    let token = machine.generation
    let (actions, validation) = machine.validationRead(await readCache(), token: token)
    perform(actions, fetch: fetch)
    return validation == .wait
  }

  // MARK: - Operations

  /// A new subscriber arrived: validate (or refetch) without waiting for the fetch.
  @usableFromInline
  func activate(forceRefresh: Bool, fetch: @escaping Fetch) async {
    guard forceRefresh else {
      _ = await ensureValid(fetch)
      return
    }
    // Read the cache first so the stale content shows while the refetch runs.
    if !machine.hasState, machine.fetch == nil { await readInitial() }
    perform(machine.startFetch(), fetch: fetch)
  }

  /// Validates and waits for the fetch it needs, if any.
  func validate(fetch: @escaping Fetch) async {
    if machine.fetch != nil { registry.counters.add(.fetchJoins) }
    if await ensureValid(fetch) { _ = await waitForFetch() }
  }

  /// Fetches again (superseding any fetch in flight) and waits.
  func refresh(fetch: @escaping Fetch) async -> Result<Data, any Error> {
    perform(machine.startFetch(), fetch: fetch)
    return await waitForFetch()
  }

  /// Valid data from where `from` says.
  func require(from: GettingFrom, fetch: @escaping Fetch) async throws -> Data {
    switch from {
    case .origin:
      let fetched = try await refresh(fetch: fetch).get()
      // With local changes, what the caller gets is what the subscribers see.
      guard !machine.overlays.isEmpty else { return fetched }
      guard let shown = machine.shown(fetched) else { throw NoSuchElementError() }
      return shown
    case .cache:
      guard let data = machine.validCached(await readCache()) else { throw NoSuchElementError() }
      return data
    case .both:
      if machine.fetch == nil, let data = machine.validCached(await readCache()), machine.fetch == nil { return data }
      if machine.fetch == nil {
        perform(machine.startFetch(), fetch: fetch)
      } else {
        registry.counters.add(.fetchJoins)
      }
      let fetched = try await waitForFetch().get()
      guard !machine.overlays.isEmpty else { return fetched }
      guard let shown = machine.shown(fetched) else { throw NoSuchElementError() }
      return shown
    }
  }

  // MARK: - Local changes (an outbox's entries)

  /// Shows the local change of outbox entry `sequence` over the content, reading the cache
  /// first when the param has no state yet, then ends the caller's lease (one hop for both).
  func applyMutationEndingLease(
    _ sequence: UInt64, enqueuedAt: Date, apply: @escaping @Sendable (Data?) -> Data?
  ) async {
    if !machine.hasState { await readInitial() }
    perform(machine.mutationApplied(sequence, enqueuedAt: enqueuedAt, apply: apply))
    endLease()
  }

  /// Shows how sending the change of `sequence` goes.
  func mutationProgress(_ sequence: UInt64, isSending: Bool, attempts: Int, failure: String?) {
    perform(machine.mutationProgress(sequence, isSending: isSending, attempts: attempts, failure: failure))
  }

  /// Shows a resolver's change in place of the rejected one of `sequence`.
  func replaceMutation(_ sequence: UInt64, apply: @escaping @Sendable (Data?) -> Data?) {
    perform(machine.mutationReplaced(sequence, apply: apply))
  }

  /// The origin applied the change of `sequence` (and sent `server`, its content, or
  /// nothing): it joins the cached content.
  func confirmMutation(_ sequence: UInt64, server: Data?) async {
    let fetch = broadcaster.latestTag
    let actions = machine.mutationConfirmed(
      sequence, server: server, canFetch: fetch != nil, now: source.cacher.now())
    await finish(perform(actions, fetch: fetch))
    scheduleReleaseIfIdle()
  }

  /// ``confirmMutation(_:server:)``, then ends the caller's lease (one hop for both).
  func confirmMutationEndingLease(_ sequence: UInt64, server: Data?) async {
    await confirmMutation(sequence, server: server)
    endLease()
  }

  /// The origin refused the change of `sequence`: it disappears and the content is refetched.
  func rejectMutation(_ sequence: UInt64) {
    let fetch = broadcaster.latestTag
    perform(machine.mutationRejected(sequence, canFetch: fetch != nil), fetch: fetch)
    scheduleReleaseIfIdle()
  }

  /// Replaces the content (newest wins over any fetch in flight); `nil` clears it.
  func update(_ data: Data?) async {
    await finish(perform(machine.update(data, now: source.cacher.now())))
  }

  /// Marks the content stale; refetches now, with the newest subscriber's fetch, when
  /// someone observes it.
  func invalidate() {
    let fetch = broadcaster.latestTag
    perform(machine.invalidate(canFetch: fetch != nil), fetch: fetch)
    // The last subscriber may have left meanwhile, before the lifetime knew a fetch was in
    // flight: cancel the fetch as the end of its subscription would have.
    if fetch != nil { abandonFetchIfUnobserved() }
  }

  /// Loads an additional page with `load`, which returns nil without a key for one, else the
  /// request, whose answer merges into the latest content (or returns nil when it no longer fits).
  func requestAdditional(
    _ direction: PageDirection, continueWhenError: Bool,
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
    let (outcome, finished) = machine.pageFinished(direction, token: token, result, now: source.cacher.now())
    await finish(perform(finished))
    return outcome
  }

  // MARK: - Leases and release

  /// Takes a lease (an operation in progress: never released meanwhile); call ``endLease()``.
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

  /// Releases this param if still idle, unless a release was scheduled again since this one fell due.
  private func releaseIfIdle() {
    guard machine.isQuiet, !lifetime.isReleaseScheduled else { return }
    _ = registry.release(param, self)
  }

  /// The last subscriber left (on its thread): hops onto the actor only to cancel a fetch.
  private nonisolated func lastSubscriberLeft() {
    if lifetime.lastSubscriberLeft(cancelsAbandonedFetch: registry.abandonedFetch == .cancel) {
      Task { await self.abandonFetchIfUnobserved() }
    }
  }

  /// Cancels the fetch (of `generation`, if given) that nobody observes or waits for, per the
  /// registry's policy, then schedules the release if idle.
  private func abandonFetchIfUnobserved(_ generation: UInt64? = nil, leavingWaiters: Int = 0) {
    if registry.abandonedFetch == .cancel, broadcaster.subscriberCount == 0 {
      perform(machine.abandonFetch(generation, leavingWaiters: leavingWaiters))
    }
    scheduleReleaseIfIdle()
  }
}
