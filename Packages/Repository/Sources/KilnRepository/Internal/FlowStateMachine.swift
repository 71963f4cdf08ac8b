import Foundation

/// The state of one param as a plain value: what it shows, the fetch in flight, the pages
/// loading, and the cache writes pending. Every event returns what to carry out
/// (``Actions``); ``FlowCoordinator`` only carries it out.
///
/// The machine never suspends and runs no user code (page merges excepted, which are pure).
/// What takes time — reading the cache, fetching, loading a page, writing — is an action
/// whose end comes back as another event, tagged with the ``generation`` it started in: an
/// ``update(_:origin:now:)``, a clear, a newer fetch or a cancelled one bumps the generation,
/// and an event from an older one changes nothing (newest wins).
///
/// Local writes not yet confirmed by the origin (an outbox's entries) are **overlays**: the
/// content shown is ``base`` (what the cache holds, the origin's last word) with every overlay
/// applied in sequence order. Only ``base`` is written to the cache. A fetch's result becomes
/// the base and the overlays go on top again, so a refresh never hides a pending change; a
/// confirmation folds its overlay into the base and bumps the generation, so a fetch that
/// started before it cannot undo it.
///
/// Tested without any concurrency: a table of transitions and a model-based test of random
/// event sequences (`FlowStateMachineTests`).
@usableFromInline
struct FlowStateMachine<Data: Sendable>: Sendable {
  /// Whether something loads or failed: the main content, or additional pages one way.
  enum Activity: Sendable {
    case idle
    case loading
    case failed(any Error)
  }

  /// Whether more pages exist each way (`PageWindow`'s), for the completed state.
  @usableFromInline typealias Paging = @Sendable (Data) -> (next: Bool, prev: Bool)

  /// The cache as read by the coordinator (after the writes enqueued before the read).
  struct CacheReading {
    var cached: CachedData<Data>?
    /// Expired, invalidated or absent.
    var isStale: Bool
  }

  /// A fetch to start with the caller's fetcher.
  struct FetchStart {
    var generation: UInt64
    /// The content it replaces (a `refresh(keepingPages:)` refetches these pages).
    var stale: Data?
  }

  /// A cache write to enqueue after every earlier one.
  struct CacheWrite {
    var data: Data?
    var cachedAt: Date?
  }

  /// What the coordinator does after an event, in this order: emit, cancel, start, write.
  struct Actions {
    var emit: LoadingSnapshot<Data>?
    /// The generation of a fetch to cancel (nobody waits for it any more).
    var cancel: UInt64?
    var start: FetchStart?
    var write: CacheWrite?

    static var none: Actions { Actions() }
  }

  /// What a validation does after reading the cache.
  enum Validation: Equatable {
    /// The state is up to date: nothing to wait for.
    case done
    /// Wait for the fetch in flight.
    case wait
  }

  /// A change made locally and not yet confirmed, shown over the base content.
  struct Overlay: Sendable {
    /// Its outbox sequence number: overlays apply in this order.
    let sequence: UInt64
    /// Makes the content with the change from the content without it.
    var apply: @Sendable (Data?) -> Data?
    var enqueuedAt: Date
    var isSending = false
    /// Attempts that failed.
    var attempts = 0
    var lastFailure: String?
  }

  /// What a request for an additional page does.
  enum PageRequest {
    /// Answer this without loading.
    case done(AdditionalRequestResult)
    /// Load a page after `content` (the caller decides whether its key allows one).
    case proceed(content: Data)
  }

  // MARK: - State

  /// Bumped by every change that makes earlier work obsolete.
  private(set) var generation: UInt64 = 0
  private(set) var main = Activity.idle
  private(set) var next = Activity.idle
  private(set) var prev = Activity.idle
  /// The content shown: ``base`` with the ``overlays`` applied.
  private(set) var content: Data?
  /// The content without local changes: the cache's or the origin's, what is written to the cache.
  private(set) var base: Data?
  /// Local changes not yet confirmed, in sequence order.
  private(set) var overlays = OverlayQueue<Data>()
  private(set) var cachedAt: Date?
  private(set) var origin: DataOrigin?
  /// Whether the state was ever set (from the cache, a fetch or an update).
  private(set) var hasState = false
  /// Invalidated since the content was fetched or written.
  private(set) var invalidated = false
  /// The fetch in flight: its generation and how many callers wait for it.
  private(set) var fetch: (generation: UInt64, waiters: Int)?
  /// Cache writes enqueued and not yet done.
  private(set) var pendingWrites = 0
  /// Whether the last state emitted is `.completed` (only this machine's actions emit).
  private(set) var showsCompleted = false
  /// When the cache entry shown was stored, while the emitted state is that entry, completed
  /// and found valid, with no fetch, write or invalidation since: new subscribers may then
  /// skip validating (see ``FlowCoordinator/showsValidCache(_:)``). `nil` otherwise.
  private(set) var settledAt: Date?
  /// Fetches started.
  private(set) var fetchCount = 0

  /// Whether subscribers can skip validating at all (the cache reads in place); without it
  /// ``settledAt`` stays `nil`.
  let canSettle: Bool
  /// Whether more pages exist in the content; `nil` for content that does not page.
  var paging: Paging?

  init(canSettle: Bool, paging: Paging?) {
    self.canSettle = canSettle
    self.paging = paging
  }

  /// No fetch in flight, no cache write pending and no local change waiting for the origin
  /// (leases and subscribers are counted elsewhere): the param may be released.
  var isQuiet: Bool {
    fetch == nil && pendingWrites == 0 && overlays.isEmpty
  }

  /// The generation of the fetch in flight.
  var fetchGeneration: UInt64? { fetch?.generation }

  // MARK: - The state shown

  /// The state to emit, or `nil` before there is one.
  var state: LoadingState<Data>? {
    switch main {
    case .loading:
      return .loading(content: content)
    case .failed(let error):
      return .error(error, content: content)
    case .idle:
      guard hasState else { return nil }
      guard let content else { return .loading(content: nil) }
      let more = paging?(content) ?? (next: false, prev: false)
      return .completed(
        content: content, next: Self.additional(next, canRequest: more.next),
        prev: Self.additional(prev, canRequest: more.prev))
    }
  }

  private static func additional(_ activity: Activity, canRequest: Bool) -> AdditionalLoadingState {
    switch activity {
    case .idle: .fixed(canRequestAdditionalData: canRequest)
    case .loading: .loading
    case .failed(let error): .error(error)
    }
  }

  /// The snapshot to emit for the current state; what the subscribers see is no longer
  /// known valid.
  private mutating func publish() -> LoadingSnapshot<Data>? {
    settledAt = nil
    guard let state else { return nil }
    // An emit the broadcaster skips as the same state leaves an equal state: this holds either way.
    if case .completed = state { showsCompleted = true } else { showsCompleted = false }
    guard !overlays.isEmpty else { return LoadingSnapshot(state: state, origin: content == nil ? nil : origin) }
    return LoadingSnapshot(state: state, origin: content == nil ? nil : .update, pending: pending)
  }

  /// What the overlays say, for the snapshot; `nil` without any.
  var pending: PendingStatus? {
    guard let oldest = overlays.first else { return nil }
    return PendingStatus(
      count: overlays.count, sendingCount: overlays.sendingCount, failedAttempts: overlays.failedAttempts,
      lastFailure: overlays.lastFailure, oldestEnqueuedAt: oldest.enqueuedAt)
  }

  /// Sets ``content`` from ``base`` and the overlays.
  private mutating func rebase() {
    content = shown(base)
  }

  /// `data` with every overlay applied, as it would be shown.
  func shown(_ data: Data?) -> Data? {
    overlays.reduce(data) { content, overlay in overlay.apply(content) }
  }

  /// Records that the state shown is the cache entry stored at `storedAt`, just found valid.
  private mutating func settle(storedAt: Date?) {
    guard canSettle, let storedAt, storedAt == cachedAt, fetch == nil, pendingWrites == 0, !invalidated,
      overlays.isEmpty, hasState, content != nil, case .idle = main, showsCompleted
    else {
      settledAt = nil
      return
    }
    settledAt = storedAt
  }

  // MARK: - Fetches

  /// Starts a fetch, superseding any in flight (its result will be ignored).
  mutating func startFetch() -> Actions {
    generation &+= 1
    next = .idle
    prev = .idle
    main = .loading
    hasState = true
    fetchCount += 1
    fetch = (generation, 0)
    var actions = Actions()
    actions.emit = publish()
    actions.start = FetchStart(generation: generation, stale: base)
    return actions
  }

  /// The fetch of `generation` ended with `result` at wall time `now`.
  mutating func fetchFinished(_ generation: UInt64, _ result: Result<Data, any Error>, now: Date) -> Actions {
    guard fetch?.generation == generation else { return .none }
    fetch = nil
    var actions = Actions()
    switch result {
    case .success(let data):
      base = data
      rebase()
      cachedAt = now
      origin = .fetcher
      main = .idle
      invalidated = false
      actions.emit = publish()
      actions.write = enqueueWrite(data, cachedAt: now)
    case .failure(let error):
      main = .failed(error)
      actions.emit = publish()
    }
    return actions
  }

  /// A caller starts waiting for the fetch of `generation`.
  mutating func waiterJoined(_ generation: UInt64) {
    if fetch?.generation == generation { fetch?.waiters += 1 }
  }

  /// A caller stopped waiting for the fetch of `generation` (answered or cancelled).
  mutating func waiterLeft(_ generation: UInt64) {
    if fetch?.generation == generation, let waiters = fetch?.waiters, waiters > 0 { fetch?.waiters = waiters - 1 }
  }

  /// Cancels the fetch in flight when nobody observes the param and at most `leavingWaiters`
  /// callers (who are leaving) wait for it. The content stays; the state shown stays too,
  /// since nobody observes it.
  ///
  /// - Parameters:
  ///   - generation: Cancel only the fetch of this generation; `nil` for any.
  ///   - leavingWaiters: Waiters that are about to leave and do not count.
  mutating func abandonFetch(_ generation: UInt64? = nil, leavingWaiters: Int = 0) -> Actions {
    guard let current = fetch, generation.map({ $0 == current.generation }) ?? true,
      current.waiters <= leavingWaiters
    else { return .none }
    fetch = nil
    self.generation &+= 1
    main = .idle
    settledAt = nil
    var actions = Actions()
    actions.cancel = current.generation
    return actions
  }

  // MARK: - Reading the cache

  /// The cache was read for a validation that began at `token` (a ``generation``).
  ///
  /// - Returns: What to carry out, and whether to wait for a fetch.
  mutating func validationRead(_ reading: CacheReading, token: UInt64) -> (Actions, Validation) {
    if fetch != nil { return (.none, .wait) }
    // An update, clear, fetch or cancellation happened during the read: it is newer.
    guard token == generation else { return (.none, .done) }
    // Nothing changed (the same cached write, already shown as completed): emit nothing.
    if !reading.isStale, !invalidated, hasState, content != nil, case .idle = main, showsCompleted,
      let cached = reading.cached, cached.cachedAt != nil, cached.cachedAt == cachedAt
    {
      settle(storedAt: cached.cachedAt)
      return (.none, .done)
    }
    if let cached = reading.cached, !hasState || cachedAt != cached.cachedAt || content == nil {
      adopt(cached)
    }
    hasState = true
    if reading.isStale || invalidated {
      let actions = startFetch()
      return (actions, .wait)
    }
    main = .idle
    var actions = Actions()
    actions.emit = publish()
    settle(storedAt: reading.cached?.cachedAt)
    return (actions, .done)
  }

  /// The cache was read, at `token`, to show something before a forced fetch or a page
  /// request: adopted only when there is no state yet. Emits nothing.
  mutating func initialRead(_ reading: CacheReading, token: UInt64) {
    guard !hasState, token == generation else { return }
    settledAt = nil
    hasState = true
    if let cached = reading.cached { adopt(cached) }
  }

  private mutating func adopt(_ cached: CachedData<Data>) {
    base = cached.data
    rebase()
    cachedAt = cached.cachedAt
    origin = .cache
  }

  /// Whether a read of the cache is valid content to return without fetching: the content
  /// as shown, with the local changes.
  func validCached(_ reading: CacheReading) -> Data? {
    guard let cached = reading.cached, !reading.isStale, !invalidated else { return nil }
    return overlays.isEmpty ? cached.data : shown(cached.data)
  }

  // MARK: - Writes and invalidation

  /// Replaces the content with `data` (`nil` clears it), superseding any fetch in flight
  /// (which is not cancelled: its result is ignored) and any page loading. Local changes
  /// stay on top of it: they are still on their way to the origin.
  mutating func update(_ data: Data?, origin newOrigin: DataOrigin = .update, now: Date) -> Actions {
    generation &+= 1
    fetch = nil
    next = .idle
    prev = .idle
    base = data
    rebase()
    cachedAt = data == nil ? nil : now
    origin = data == nil ? nil : newOrigin
    main = .idle
    hasState = true
    invalidated = false
    var actions = Actions()
    actions.emit = publish()
    actions.write = enqueueWrite(data, cachedAt: cachedAt)
    return actions
  }

  private mutating func enqueueWrite(_ data: Data?, cachedAt: Date?) -> CacheWrite {
    pendingWrites += 1
    settledAt = nil
    return CacheWrite(data: data, cachedAt: cachedAt)
  }

  /// A cache write ended.
  mutating func writeFinished() {
    pendingWrites -= 1
  }

  /// The content is stale now. Refetches when someone observes it with a fetcher
  /// (`canFetch`) and no fetch is in flight.
  mutating func invalidate(canFetch: Bool) -> Actions {
    invalidated = true
    settledAt = nil
    guard canFetch, fetch == nil else { return .none }
    return startFetch()
  }

  // MARK: - Additional pages

  /// A request for an additional page `direction`: whether the state allows one.
  func pageRequest(_ direction: PageDirection, continueWhenError: Bool) -> PageRequest {
    switch main {
    case .loading: return .done(.skipped(.mainLoading))
    case .failed: return .done(.rejected(.onErrorState))
    case .idle: break
    }
    // Pages continue what the origin sent: the base, not the local changes over it.
    guard let base else { return .done(.rejected(.onNil)) }
    switch activity(direction) {
    case .loading: return .done(.skipped(.alreadyLoading))
    case .failed where !continueWhenError: return .done(.skipped(.previousError))
    case .failed, .idle: return .proceed(content: base)
    }
  }

  /// The page `direction` starts loading.
  ///
  /// - Returns: The generation that its end must come back with, and what to carry out.
  mutating func pageStarted(_ direction: PageDirection) -> (token: UInt64, Actions) {
    setActivity(direction, .loading)
    var actions = Actions()
    actions.emit = publish()
    return (generation, actions)
  }

  /// The page `direction` started at `token` ended: `merge` makes the new content from the
  /// latest one (or returns `nil` when the page no longer fits it), or the load failed.
  mutating func pageFinished(
    _ direction: PageDirection, token: UInt64, _ result: Result<(Data) -> Data?, any Error>, now: Date
  ) -> (AdditionalRequestResult, Actions) {
    guard token == generation else { return (.superseded, .none) }
    var actions = Actions()
    switch result {
    case .failure(let error):
      setActivity(direction, .failed(error))
      actions.emit = publish()
      return (.failed(error), actions)
    case .success(let merge):
      guard let latest = base else { return (.superseded, .none) }
      setActivity(direction, .idle)
      guard let merged = merge(latest) else {
        actions.emit = publish()
        return (.superseded, actions)
      }
      base = merged
      rebase()
      cachedAt = cachedAt ?? now
      origin = .fetcher
      actions.emit = publish()
      actions.write = enqueueWrite(merged, cachedAt: cachedAt)
      return (.loaded, actions)
    }
  }

  // MARK: - Local changes

  /// A local change (outbox entry `sequence`) is shown at once, over the base and the
  /// earlier changes. A fetch in flight goes on: its result becomes the base, under this change.
  mutating func mutationApplied(
    _ sequence: UInt64, enqueuedAt: Date, apply: @escaping @Sendable (Data?) -> Data?
  ) -> Actions {
    let overlay = Overlay(sequence: sequence, apply: apply, enqueuedAt: enqueuedAt)
    hasState = true
    if overlays.insert(overlay) {
      // The newest change (the usual case): it goes on top of what is shown, in O(1), however
      // many changes wait under it.
      content = apply(content)
    } else {
      // Restored out of order: its place is among the others.
      rebase()
    }
    var actions = Actions()
    actions.emit = publish()
    return actions
  }

  /// The sender started (`isSending`) or ended an attempt at `sequence`, which failed
  /// `attempts` times so far, last with `failure`. Changes only the pending status.
  mutating func mutationProgress(
    _ sequence: UInt64, isSending: Bool, attempts: Int, failure: String?
  ) -> Actions {
    guard let index = overlays.position(of: sequence) else { return .none }
    var overlay = overlays[index]
    overlay.isSending = isSending
    overlay.attempts = attempts
    if let failure { overlay.lastFailure = failure }
    overlays[index] = overlay
    var actions = Actions()
    actions.emit = publish()
    return actions
  }

  /// The change of `sequence` is replaced by a resolver's: the new one shows in its place.
  mutating func mutationReplaced(_ sequence: UInt64, apply: @escaping @Sendable (Data?) -> Data?) -> Actions {
    guard let index = overlays.position(of: sequence) else { return .none }
    var overlay = overlays[index]
    overlay.apply = apply
    overlay.attempts = 0
    overlay.lastFailure = nil
    overlay.isSending = false
    overlays[index] = overlay
    rebase()
    var actions = Actions()
    actions.emit = publish()
    return actions
  }

  /// The origin applied the change of `sequence`, and answered `server` (its content now) or
  /// nothing. The change joins the base, which is written to the cache; a fetch that started
  /// before is ignored (it may predate the change). When it was the last local change and the
  /// origin sent no content, the param is validated once: refetched now when `canFetch`.
  mutating func mutationConfirmed(_ sequence: UInt64, server: Data?, canFetch: Bool, now: Date) -> Actions {
    guard let index = overlays.position(of: sequence) else { return .none }
    let overlay = overlays.remove(at: index)
    generation &+= 1
    if fetch != nil {
      fetch = nil
      main = .idle
    }
    next = .idle
    prev = .idle
    if index == 0, server == nil {
      // The oldest change joins the base: the fold of the others over it is what was shown
      // already, so nothing is applied again (draining n changes stays O(n)).
      base = overlay.apply(base)
    } else {
      base = server ?? overlay.apply(base)
      rebase()
    }
    cachedAt = base == nil ? nil : now
    origin = server == nil ? .update : .fetcher
    hasState = true
    invalidated = false
    var actions = Actions()
    actions.emit = publish()
    actions.write = enqueueWrite(base, cachedAt: cachedAt)
    if overlays.isEmpty, server == nil {
      let validation = invalidate(canFetch: canFetch)
      actions.emit = validation.emit ?? actions.emit
      actions.start = validation.start
    }
    return actions
  }

  /// The origin refused the change of `sequence` for good: it disappears, the content
  /// shown goes back to the base with the other changes, and the base is refetched now when
  /// `canFetch` (else on the next use), which brings the origin's truth.
  mutating func mutationRejected(_ sequence: UInt64, canFetch: Bool) -> Actions {
    guard let index = overlays.position(of: sequence) else { return .none }
    _ = overlays.remove(at: index)
    rebase()
    var actions = Actions()
    actions.emit = publish()
    let validation = invalidate(canFetch: canFetch)
    actions.emit = validation.emit ?? actions.emit
    actions.start = validation.start
    return actions
  }

  private func activity(_ direction: PageDirection) -> Activity {
    direction == .next ? next : prev
  }

  private mutating func setActivity(_ direction: PageDirection, _ value: Activity) {
    if direction == .next { next = value } else { prev = value }
  }
}

/// The direction of an additional page.
enum PageDirection: Sendable {
  case next
  case prev
}
