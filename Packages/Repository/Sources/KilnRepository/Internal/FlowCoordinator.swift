public import Foundation
public import _KilnSynchronization

/// The state of one param: its content, whether it loads or failed, the one fetch in
/// flight, the additional page requests, and the order of cache writes.
///
/// Every change happens on this actor and is emitted through ``broadcaster``. After every
/// `await`, the code re-checks `generation`: an `update`, `clear` or newer fetch bumps it,
/// and whatever started before it can no longer change the content or the cache (newest
/// wins). Cache writes run one after another in the order of the state changes, so the
/// cache ends with what the state shows.
@usableFromInline
actor FlowCoordinator<Param: Hashable & Sendable, Data: Sendable> {
  @usableFromInline typealias Fetch = @Sendable (Param, Data?) async throws -> Data
  typealias FetchTask = Task<Result<Data, any Error>, Never>

  private enum Phase {
    case fixed
    case loading
    case failed(any Error)
  }

  private enum Additional {
    case fixed
    case loading
    case failed(any Error)
  }

  @usableFromInline nonisolated let param: Param
  nonisolated let cacher: any Cacher<Param, Data>
  @usableFromInline nonisolated let registry: FlowRegistry<Param, Data>
  /// The cacher when it is a `StoreCacher` over a `MemoryCache`, read in place by
  /// ``readCache()``. Awaiting a cacher's requirements (nonisolated async functions) leaves
  /// this actor's executor and comes back, twice per read; a `StoreCacher` is final and keeps
  /// the default `needsRefresh`, and a `MemoryCache` reads synchronously, so reading them here
  /// gives the same answer without suspending.
  @usableFromInline nonisolated let memoryCacher: StoreCacher<Param, Data>?
  @usableFromInline nonisolated let broadcaster = Broadcaster<Data>()
  /// Leases (operations in progress and not yet ended); a leased coordinator is never released.
  private nonisolated let leases = KilnMutex(0)
  /// What is read off the actor: by a new subscriber (``showsValidCache(_:fetchID:)``), by the
  /// end of a subscription (``lastSubscriberLeft()``) and by the release of an idle param.
  @usableFromInline nonisolated let mirror = KilnMutex(FlowMirror())

  private var generation: UInt64 = 0
  private var phase = Phase.fixed
  private var content: Data?
  private var cachedAt: Date?
  private var origin: DataOrigin?
  private var hasState = false
  private var invalidated = false
  private var fetch: (generation: UInt64, task: FetchTask)?
  private var fetchWaiters = 0
  private var lastFetch: Fetch?
  private var lastWrite: Task<Void, Never>?
  private var next = Additional.fixed
  private var prev = Additional.fixed
  /// Identifies ``lastFetch`` (see ``FlowHandle/fetchID``); 0 for a fetch no handle made.
  private var lastFetchID: UInt64 = 0
  /// What ``mirror`` holds, kept here to take its lock only for a change.
  private var mirroredSettledAt: Date?
  private var mirroredFetching = false
  private var mirroredBusy = false
  /// Whether the broadcaster's current state is `.completed`: only this actor emits, so it
  /// knows without reading the broadcaster (a lock and a generic copy on every subscription).
  private var showsCompleted = false

  /// Fetches started, for tests and statistics.
  private(set) var fetchCount = 0

  @usableFromInline
  init(param: Param, cacher: any Cacher<Param, Data>, registry: FlowRegistry<Param, Data>) {
    self.param = param
    self.cacher = cacher
    self.registry = registry
    let storeCacher = cacher as? StoreCacher<Param, Data>
    self.memoryCacher = storeCacher?.memory == nil ? nil : storeCacher
    broadcaster.onEmpty { [weak self] in self?.lastSubscriberLeft() }
  }

  // MARK: - Leases and release

  /// Takes a lease; call ``endLease()`` when done.
  nonisolated func lease() -> Self {
    leases.withLock { $0 += 1 }
    return self
  }

  /// Ends a lease; the last one schedules the release of an idle coordinator.
  func endLease() {
    let remaining = leases.withLock { leases in
      leases -= 1
      return leases
    }
    if remaining == 0 { scheduleReleaseIfIdle() }
  }

  /// No lease and no subscriber (checked by the registry under its lock).
  nonisolated var isUnused: Bool {
    leases.withLock { $0 } == 0 && broadcaster.subscriberCount == 0
  }

  private var isIdle: Bool {
    fetch == nil && fetchWaiters == 0 && lastWrite == nil && isUnused
  }

  private func scheduleReleaseIfIdle() {
    guard isIdle else { return }
    scheduleRelease()
  }

  /// Releases this param the release delay from now if it is idle then. One task per param
  /// sleeps until the deadline, and again while a later call moves it: ending a subscription
  /// moves a deadline instead of cancelling one task and starting another.
  private nonisolated func scheduleRelease() {
    let deadline = registry.elapsed() + registry.releaseDelay
    let start = mirror.withLock { mirror in
      mirror.releaseDeadline = deadline
      guard !mirror.releasing else { return false }
      mirror.releasing = true
      return true
    }
    if start { Task { await self.runRelease() } }
  }

  private nonisolated func runRelease() async {
    while true {
      let deadline = mirror.withLock { mirror in
        if mirror.releaseDeadline == nil { mirror.releasing = false }
        return mirror.releaseDeadline
      }
      guard let deadline else { return }
      if registry.elapsed() < deadline {
        do {
          try await registry.sleepUntilElapsed(deadline)
        } catch {
          // Never cancelled; should it be, the next schedule starts a new task.
          mirror.withLock { $0.releasing = false }
          return
        }
        continue
      }
      // Due, unless moved meanwhile: release it if nothing used it since it became idle.
      let due = mirror.withLock { mirror in
        guard mirror.releaseDeadline == deadline else { return false }
        mirror.releaseDeadline = nil
        return true
      }
      if due { await releaseIfIdle() }
    }
  }

  /// Releases this param if it is idle and no release was scheduled again since this one fell
  /// due: a subscription that ended, or an abandoned fetch cancelled, after the due check
  /// moved the deadline, and the release task sleeps until that one instead.
  private func releaseIfIdle() {
    guard isIdle, mirror.withLock({ $0.releaseDeadline == nil }) else { return }
    _ = registry.release(param, self)
  }

  /// The broadcaster lost its last subscriber (called on the thread that removed it). Hops
  /// onto the actor only to cancel a fetch nobody waits for; otherwise schedules the release
  /// in place (the actor schedules it itself when it becomes idle later).
  private nonisolated func lastSubscriberLeft() {
    let (fetching, busy) = mirror.withLock { ($0.fetching, $0.busy) }
    if fetching, registry.abandonedFetch == .cancel {
      Task { await self.cancelAbandonedFetchAndScheduleRelease() }
    } else if !busy, leases.withLock({ $0 }) == 0 {
      // No subscriber (just removed; one arriving now finds the release not due, since
      // the release checks again on the actor that the param is idle).
      scheduleRelease()
    }
  }

  private func cancelAbandonedFetchAndScheduleRelease() {
    cancelAbandonedFetch()
    scheduleReleaseIfIdle()
  }

  // MARK: - Mirror

  /// Copies whether a fetch is in flight and whether the actor is busy to ``mirror``; call
  /// after every change of `fetch`, `fetchWaiters` or `lastWrite`.
  private func mirrorBusy() {
    let fetching = fetch != nil
    let busy = fetching || fetchWaiters > 0 || lastWrite != nil
    guard fetching != mirroredFetching || busy != mirroredBusy else { return }
    mirroredFetching = fetching
    mirroredBusy = busy
    mirror.withLock { mirror in
      mirror.fetching = fetching
      mirror.busy = busy
    }
  }

  /// The state shown may no longer be the cache's: new subscribers validate on the actor.
  private func unsettle() {
    guard mirroredSettledAt != nil else { return }
    mirroredSettledAt = nil
    mirror.withLock { $0.settledAt = nil }
  }

  /// Records that the broadcaster shows the completed state of the cache entry stored at
  /// `storedAt`, just checked valid, so that new subscribers skip the actor while it lasts.
  private func settle(storedAt: Date?) {
    guard memoryCacher != nil, let storedAt, storedAt == cachedAt, fetch == nil, lastWrite == nil, !invalidated,
      hasState, content != nil, case .fixed = phase, showsCompleted
    else { return unsettle() }
    guard mirroredSettledAt != storedAt else { return }
    mirroredSettledAt = storedAt
    mirror.withLock { $0.settledAt = storedAt }
  }

  /// Remembers the fetch to repeat on invalidation.
  private func remember(_ fetcher: @escaping Fetch, id: UInt64) {
    lastFetch = fetcher
    guard id != lastFetchID else { return }
    lastFetchID = id
    mirror.withLock { $0.lastFetchID = id }
  }

  /// Whether a new subscriber of `coordinator`, whose replay is its broadcaster's current state, may skip
  /// ``activate(forceRefresh:fetcher:fetchID:)``: the actor found that state valid and
  /// completed, nothing changed it since, it remembers the subscriber's fetch, and the
  /// memory cache still holds the same entry, neither expired nor invalidated. Then
  /// validating on the actor would emit nothing and change nothing.
  ///
  /// Inlinable and static (an actor's instance methods are called through its vtable, which
  /// no caller specialises), so that a subscription specialised for its Param and Data (see
  /// ``FlowHandle/snapshots(forceRefresh:)``) reads the memory cache specialised too.
  @inlinable
  static func showsValidCache(_ coordinator: FlowCoordinator, fetchID: UInt64) -> Bool {
    guard let memoryCacher = coordinator.memoryCacher, let memory = memoryCacher.memory else { return false }
    let settledAt = coordinator.mirror.withLock { $0.lastFetchID == fetchID ? $0.settledAt : nil }
    guard let settledAt, let entry = memory.entry(forKey: coordinator.param), entry.storedAt == settledAt else {
      return false
    }
    return !coordinator.registry.isInvalidated(coordinator.param, cachedAt: settledAt)
      && !memoryCacher.isExpired(cachedAt: settledAt)
  }

  /// Cancels the fetch when nobody waits for it and the policy says so; the content stays.
  private func cancelAbandonedFetch(leavingWaiters: Int = 0) {
    guard registry.abandonedFetch == .cancel, let current = fetch, fetchWaiters <= leavingWaiters,
      broadcaster.subscriberCount == 0
    else { return }
    current.task.cancel()
    fetch = nil
    generation &+= 1
    phase = .fixed
    unsettle()
    mirrorBusy()
  }

  // MARK: - State

  private func currentState() -> LoadingState<Data>? {
    switch phase {
    case .loading:
      return .loading(content: content)
    case .failed(let error):
      return .error(error, content: content)
    case .fixed:
      guard hasState else { return nil }
      guard let content else { return .loading(content: nil) }
      let paging = content as? any PagingSource
      return .completed(
        content: content,
        next: additionalState(next, canRequest: paging?.canRequestNext ?? false),
        prev: additionalState(prev, canRequest: paging?.canRequestPrev ?? false))
    }
  }

  private func additionalState(_ additional: Additional, canRequest: Bool) -> AdditionalLoadingState {
    switch additional {
    case .fixed: .fixed(canRequestAdditionalData: canRequest)
    case .loading: .loading
    case .failed(let error): .error(error)
    }
  }

  private func publish() {
    unsettle()
    guard let state = currentState() else { return }
    broadcaster.emit(LoadingSnapshot(state: state, origin: content == nil ? nil : origin))
    // An emit skipped as the same state leaves an equal state, so this holds either way.
    if case .completed = state { showsCompleted = true } else { showsCompleted = false }
  }

  /// The content and its date as the coordinator knows them.
  var snapshot: (content: Data?, cachedAt: Date?) { (content, cachedAt) }

  // MARK: - Reading the cache

  private struct Reading {
    var cached: CachedData<Data>?
    var isStale: Bool
  }

  /// Reads the cache after every write enqueued so far.
  private func readCache() async -> Reading {
    if let lastWrite { await lastWrite.value }
    if let memoryCacher, let memory = memoryCacher.memory {
      guard let entry = memory.entry(forKey: param) else { return Reading(cached: nil, isStale: true) }
      let cached = CachedData(data: entry.value, cachedAt: entry.storedAt)
      let stale =
        registry.isInvalidated(param, cachedAt: cached.cachedAt) || memoryCacher.isExpired(cachedAt: cached.cachedAt)
      return Reading(cached: cached, isStale: stale)
    }
    let cached = try? await cacher.loadCachedData(param: param)
    guard let cached else { return Reading(cached: nil, isStale: true) }
    let stale =
      registry.isInvalidated(param, cachedAt: cached.cachedAt)
      ? true : await cacher.needsRefresh(cachedAt: cached.cachedAt, param: param)
    return Reading(cached: cached, isStale: stale)
  }

  /// Brings the state up to date with the cache and starts a fetch when the cache is empty,
  /// expired or invalidated. Returns the fetch to wait for, if any.
  private func ensureValid(_ fetcher: @escaping Fetch, fetchID: UInt64) async -> FetchTask? {
    remember(fetcher, id: fetchID)
    if let fetch { return fetch.task }
    let before = generation
    let reading = await readCache()
    // Re-check: an update, clear or fetch may have finished (or started) during the read.
    if let fetch { return fetch.task }
    guard before == generation else { return nil }
    // Nothing changed (the same cached write, already shown as completed): emit nothing.
    if !reading.isStale, !invalidated, hasState, content != nil, case .fixed = phase,
      showsCompleted,
      let cached = reading.cached, cached.cachedAt != nil, cached.cachedAt == cachedAt
    {
      settle(storedAt: cached.cachedAt)
      return nil
    }
    if let cached = reading.cached {
      if !hasState || cachedAt != cached.cachedAt || content == nil {
        content = cached.data
        cachedAt = cached.cachedAt
        origin = .cache
      }
    }
    hasState = true
    if reading.isStale || invalidated {
      return startFetch(fetcher, fetchID: fetchID)
    }
    phase = .fixed
    publish()
    settle(storedAt: reading.cached?.cachedAt)
    return nil
  }

  private func startFetch(_ fetcher: @escaping Fetch, fetchID: UInt64) -> FetchTask {
    remember(fetcher, id: fetchID)
    generation &+= 1
    let fetchGeneration = generation
    next = .fixed
    prev = .fixed
    phase = .loading
    hasState = true
    fetchCount += 1
    publish()
    let param = self.param
    let stale = content
    let task = FetchTask {
      let result: Result<Data, any Error>
      do {
        result = .success(try await fetcher(param, stale))
      } catch {
        result = .failure(error)
      }
      await self.finishFetch(fetchGeneration, result)
      return result
    }
    fetch = (fetchGeneration, task)
    mirrorBusy()
    return task
  }

  private func finishFetch(_ fetchGeneration: UInt64, _ result: Result<Data, any Error>) async {
    guard let current = fetch, current.generation == fetchGeneration else { return }
    fetch = nil
    mirrorBusy()
    switch result {
    case .success(let data):
      content = data
      cachedAt = cacher.now()
      origin = .fetcher
      phase = .fixed
      invalidated = false
      publish()
      await write(data, cachedAt: cachedAt)
    case .failure(let error):
      phase = .failed(error)
      publish()
    }
    scheduleReleaseIfIdle()
  }

  /// Waits for `task`, counting as one of its waiters: when the last waiter is cancelled
  /// and nobody observes, the fetch is cancelled (per the registry's policy).
  private func wait(for task: FetchTask) async -> Result<Data, any Error> {
    fetchWaiters += 1
    mirrorBusy()
    let result = await withTaskCancellationHandler {
      await task.value
    } onCancel: {
      Task { await self.waiterCancelled(task) }
    }
    fetchWaiters -= 1
    mirrorBusy()
    return result
  }

  private func waiterCancelled(_ task: FetchTask) {
    // The cancelled waiter still counts until the task answers it: cancel when it is the only one.
    guard fetch?.task == task else { return }
    cancelAbandonedFetch(leavingWaiters: 1)
  }

  /// Writes after every earlier write, then waits for it.
  private func write(_ data: Data?, cachedAt: Date?) async {
    let previous = lastWrite
    let cacher = self.cacher
    let param = self.param
    let task = Task {
      await previous?.value
      try? await cacher.saveCachedData(data, cachedAt: cachedAt, param: param)
    }
    lastWrite = task
    unsettle()
    mirrorBusy()
    await task.value
    if lastWrite == task {
      lastWrite = nil
      mirrorBusy()
    }
  }

  // MARK: - Operations

  /// A new subscriber arrived: validate (or refetch) without waiting for the fetch.
  ///
  /// `fetchID` identifies `fetcher` (see ``FlowHandle/fetchID``) in this and the following
  /// operations; 0 for a fetch no handle made.
  func activate(forceRefresh: Bool, fetcher: @escaping Fetch, fetchID: UInt64) async {
    if forceRefresh {
      // Read the cache first so the stale content shows while the refetch runs.
      if !hasState, fetch == nil { _ = await readCacheIfNeeded() }
      _ = startFetch(fetcher, fetchID: fetchID)
    } else {
      _ = await ensureValid(fetcher, fetchID: fetchID)
    }
  }

  /// Validates and waits for the fetch it needs, if any.
  func validate(fetcher: @escaping Fetch, fetchID: UInt64) async {
    if let task = await ensureValid(fetcher, fetchID: fetchID) { _ = await wait(for: task) }
  }

  /// Fetches again (superseding any fetch in flight) and waits.
  @discardableResult
  func refresh(fetcher: @escaping Fetch, fetchID: UInt64 = 0) async -> Result<Data, any Error> {
    await wait(for: startFetch(fetcher, fetchID: fetchID))
  }

  /// Valid data from where `from` says.
  func require(from: GettingFrom, fetcher: @escaping Fetch, fetchID: UInt64) async throws -> Data {
    switch from {
    case .origin:
      return try await refresh(fetcher: fetcher, fetchID: fetchID).get()
    case .cache:
      let reading = await readCache()
      guard let cached = reading.cached, !reading.isStale, !invalidated else { throw NoSuchElementError() }
      return cached.data
    case .both:
      if fetch == nil {
        let reading = await readCache()
        if fetch == nil, let cached = reading.cached, !reading.isStale, !invalidated { return cached.data }
      }
      let task = fetch?.task ?? startFetch(fetcher, fetchID: fetchID)
      return try await wait(for: task).get()
    }
  }

  /// Replaces the content (newest wins over any fetch in flight); `nil` clears it.
  func update(_ data: Data?, origin newOrigin: DataOrigin = .update) async {
    generation &+= 1
    fetch = nil
    mirrorBusy()
    next = .fixed
    prev = .fixed
    content = data
    cachedAt = data == nil ? nil : cacher.now()
    origin = data == nil ? nil : newOrigin
    phase = .fixed
    hasState = true
    invalidated = false
    publish()
    await write(data, cachedAt: cachedAt)
  }

  /// Marks the content stale; refetches now when someone observes it.
  func invalidate() {
    invalidated = true
    unsettle()
    if broadcaster.subscriberCount > 0, fetch == nil, let lastFetch {
      _ = startFetch(lastFetch, fetchID: lastFetchID)
      // The last subscriber may have left meanwhile, before the mirror said a fetch was in
      // flight: cancel the fetch as the end of its subscription would have.
      if broadcaster.subscriberCount == 0 { cancelAbandonedFetchAndScheduleRelease() }
    }
  }

  // MARK: - Additional pages

  /// Loads an additional page with `load` (which returns the new content, or `nil` when the
  /// answer no longer fits the content) following the seed's transitions.
  func requestAdditional(
    _ direction: PageDirection,
    continueWhenError: Bool,
    load: @escaping @Sendable (Data) -> (@Sendable () async throws -> @Sendable (Data) -> Data?)?
  ) async -> AdditionalRequestResult {
    if !hasState { _ = await readCacheIfNeeded() }
    switch phase {
    case .loading: return .skipped(.mainLoading)
    case .failed: return .rejected(.onErrorState)
    case .fixed: break
    }
    guard let current = content else { return .rejected(.onNil) }
    switch additional(direction) {
    case .loading: return .skipped(.alreadyLoading)
    case .failed where !continueWhenError: return .skipped(.previousError)
    case .failed, .fixed: break
    }
    guard let request = load(current) else { return .skipped(.noMoreData) }
    let requestGeneration = generation
    setAdditional(direction, .loading)
    publish()
    let merge: @Sendable (Data) -> Data?
    do {
      merge = try await request()
    } catch {
      guard requestGeneration == generation else { return .superseded }
      setAdditional(direction, .failed(error))
      publish()
      return .failed(error)
    }
    guard requestGeneration == generation, let latest = content else { return .superseded }
    setAdditional(direction, .fixed)
    guard let merged = merge(latest) else {
      publish()
      return .superseded
    }
    content = merged
    cachedAt = cachedAt ?? cacher.now()
    origin = .fetcher
    publish()
    await write(merged, cachedAt: cachedAt)
    return .loaded
  }

  private func readCacheIfNeeded() async -> Bool {
    let before = generation
    let reading = await readCache()
    guard !hasState, before == generation else { return false }
    unsettle()
    hasState = true
    if let cached = reading.cached {
      content = cached.data
      cachedAt = cached.cachedAt
      origin = .cache
    }
    return true
  }

  private func additional(_ direction: PageDirection) -> Additional {
    direction == .next ? next : prev
  }

  private func setAdditional(_ direction: PageDirection, _ value: Additional) {
    if direction == .next { next = value } else { prev = value }
  }
}

/// The part of the actor's state read without hopping onto it, and the release deadline.
/// Not nested in the coordinator (so not generic): reading it from unspecialised code looks
/// up no metadata.
@usableFromInline
struct FlowMirror: Sendable {
  /// When the cache entry shown was stored, while the broadcaster shows it completed and
  /// valid as the actor last checked (no fetch, no write, no invalidation since); `nil`
  /// otherwise.
  @usableFromInline var settledAt: Date?
  /// The coordinator's `lastFetchID`.
  @usableFromInline var lastFetchID: UInt64 = 0
  /// A fetch is in flight.
  var fetching = false
  /// A fetch is in flight, awaited, or a cache write is pending: not idle.
  var busy = false
  /// When an idle param is released, as an offset on the registry's clock
  /// (``FlowRegistry/elapsed``); `nil` when no release is due.
  var releaseDeadline: Duration?
  /// A release task runs (it sleeps until ``releaseDeadline``, again while it moves).
  var releasing = false

  @usableFromInline init() {}
}

/// The direction of an additional page.
enum PageDirection: Sendable {
  case next
  case prev
}
