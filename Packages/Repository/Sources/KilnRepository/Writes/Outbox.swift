public import Foundation
import _KilnSynchronization

#if Logging
  public import Logging
#endif

/// A durable queue of local changes on their way to the origin: one store, one sender, and
/// one channel per repository that writes through it.
///
/// ```swift
/// let outbox = try await Outbox.open(SQLiteOutboxStore(url: support.appending(path: "outbox.sqlite")))
/// let titles = try await notes.writes(
///   through: NoteTitle(handler: handler), outbox: outbox, channel: "note-title",
///   paramCodec: .automatic, changeCodec: .automatic)
/// try await titles.mutate(noteID, "Groceries")   // shown at once, durable now, sent when it can be
/// ```
///
/// What it promises:
/// - **Nothing acknowledged is lost.** ``Writes/mutate(_:_:)`` returns once the change is in
///   the store; after a crash, ``open(_:clock:options:now:)`` loads it again and it is sent with
///   the same idempotency key, so an origin that honours `Idempotency-Key` applies it once.
/// - **Order per scope.** The changes of one scope (by default one param) are sent one at a
///   time, oldest first; different scopes go in parallel, at most
///   ``OutboxOptions/maxConcurrentSends`` at once.
/// - **Failures wait, they do not drop.** A failure that may pass is retried as
///   ``OutboxOptions/retry`` says, then the scope stalls until ``resume()``; an unreachable
///   origin pauses every scope, probed every ``OutboxOptions/probeInterval``. Only a
///   rejection (see ``MutationSendError/rejected(status:body:)``) removes a change.
/// - **Damage is reported.** An entry whose bytes were damaged on disk is moved to the
///   store's quarantine, reported in ``damaged`` and ``events()``, and its param is refetched
///   when its channel attaches; the others still go.
///
/// Entries of a channel nobody attached yet wait (``OutboxEntrySummary/State/waitingForChannel``).
///
/// **One outbox per store.** Two outboxes sending one store's entries would send each twice
/// and a scope's out of order, so an outbox takes the store's sender lock when it opens (a
/// KilnStorage `SenderLockingOutboxStore`: every store Kiln ships) and gives it back when it
/// closes: a second ``open(_:clock:options:now:)`` of the same store, in this process or
/// another (an app and its extension on one file, two instances of a service on one table),
/// throws ``OutboxError/storeInUse(by:)``. The lock of a killed process is free again.
public actor Outbox {
  /// The store the entries live in.
  public nonisolated let store: any OutboxStore
  /// What the retries, stalls and probes follow.
  public nonisolated let options: OutboxOptions
  private nonisolated let clock: any Clock<Duration>
  private nonisolated let now: @Sendable () -> Date
  #if Logging
    /// Where the outbox tells what happens to its entries (the `Logging` trait): `warning`
    /// when a scope stalls, the origin is unreachable or an entry is quarantined, `notice` for
    /// a rejection, `info` when sending resumes, `debug` for each failed attempt; nothing for
    /// a change recorded or confirmed. `nil` unless given to
    /// ``open(_:clock:options:logger:now:)``.
    public nonisolated let logger: Logger?
  #endif

  /// A channel's side of sending: one attempt, with the repository's updates around it.
  struct Channel: Sendable {
    var attempt: @Sendable (_ entry: OutboxEntry, _ attempt: Int) async -> AttemptResult
    var failed: @Sendable (_ sequence: UInt64, _ param: Foundation.Data, _ attempts: Int, _ error: String) async -> Void
  }

  /// An attempt to run: the entry, its attempt number and its channel.
  struct PendingAttempt: Sendable {
    let entry: OutboxEntry
    let number: Int
    let channel: Channel
  }

  /// How one attempt ended, with what the channel already did about it.
  enum AttemptResult: Sendable {
    case confirmed
    case rejected(status: Int, body: Foundation.Data?, error: any Error)
    case replaced(OutboxRecord)
    case retryable(MutationSendError)
    case unreachable(MutationSendError)
    /// The entry cannot be read by its channel any more (its codec changed).
    case unreadable(String)
  }

  private typealias Machine = OutboxSenderMachine<MutationSendError>

  private struct Info {
    var entry: OutboxEntry
    var lane: Machine.Lane
    var state: OutboxEntrySummary.State
  }

  private var machine: Machine
  private var channels: [String: Channel] = [:]
  /// Every entry not yet confirmed, rejected or quarantined, by sequence.
  private var infos: [UInt64: Info] = [:] {
    didSet { counters.setPending(infos.count) }
  }
  /// What the outbox did: see ``statistics``.
  nonisolated let counters = OutboxCounters()
  private var restored: [String: [OutboxEntry]] = [:]
  /// The entries found damaged, all along.
  public private(set) var damaged: [OutboxDamage] = []
  private var isClosed = false
  /// The store's sender lock, held until ``close()`` (or until the outbox is released).
  private var senderLease: OutboxSenderLease?
  /// Appends run one at a time, so that entries reach the sender in sequence order.
  private var isAppending = false
  private var appendWaiters: [CheckedContinuation<Void, Never>] = []
  /// Entries appended whose change is not shown yet (``ready(_:)`` not called): they may not be
  /// coalesced into.
  private var unshown: Set<UInt64> = []
  /// Entries restored by ``open(_:clock:options:now:)``: they may have been sent before, so
  /// they are never coalesced into.
  private var restoredSequences: Set<UInt64> = []
  /// Entries whose record a coalesced change is replacing: not sent until it is shown.
  private var pinned: Set<UInt64> = []
  /// Attempts the sender began on a pinned entry, begun when it is released.
  private var deferredAttempts: [UInt64: Int] = [:]
  /// Timers and attempts in flight, cancelled by ``close()``.
  private var tasks: [UInt64: Task<Void, Never>] = [:]
  private var nextTask: UInt64 = 0
  /// Entries answered and not yet removed from the store, and whether a removal runs.
  private var removals: [UInt64] = []
  /// While an attempt's end is carried out (synchronously), the first attempt it starts is
  /// kept here for the ending attempt's task to run next, instead of in a new task.
  private var adoptedAttempt: PendingAttempt?
  private var adoptsAttempt = false
  private var isRemoving = false
  private var drainWaiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
  private var nextDrainWaiter: UInt64 = 0
  private nonisolated let subscribers = KilnMutex<(next: UInt64, all: [UInt64: AsyncStream<OutboxEvent>.Continuation])>(
    (0, [:]))
  private nonisolated let entrySubscribers = KilnMutex<
    (next: UInt64, all: [UInt64: AsyncStream<[OutboxEntrySummary]>.Continuation])
  >((0, [:]))
  private var isEntriesFlushScheduled = false

  #if Logging
    private init(
      store: any OutboxStore, clock: any Clock<Duration>, options: OutboxOptions, now: @escaping @Sendable () -> Date,
      logger: Logger? = nil
    ) {
      self.store = store
      self.clock = clock
      self.options = options
      self.now = now
      self.logger = logger
      machine = Machine(
        policy: options.retry, maxInFlight: options.maxConcurrentSends, probeInterval: options.probeInterval)
    }
  #else
    private init(
      store: any OutboxStore, clock: any Clock<Duration>, options: OutboxOptions, now: @escaping @Sendable () -> Date
    ) {
      self.store = store
      self.clock = clock
      self.options = options
      self.now = now
      machine = Machine(
        policy: options.retry, maxInFlight: options.maxConcurrentSends, probeInterval: options.probeInterval)
    }
  #endif

  /// Opens the outbox of `store`: loads every entry (each waits for its channel to attach)
  /// and moves damaged ones to the store's quarantine.
  ///
  /// - Parameters:
  ///   - store: Where the entries live; KilnStorage's `SQLiteOutboxStore` survives a crash.
  ///   - clock: What retries, stalls and probes wait on; a test passes KilnTesting's `ManualClock`.
  ///   - options: Retry policy, concurrency and probe interval.
  ///   - now: The wall clock that dates new entries.
  /// - Throws: ``OutboxError/storeInUse(by:)`` when another outbox sends the store's entries;
  ///   ``OutboxError/store(_:)`` when the store cannot be read.
  public static func open(
    _ store: some OutboxStore,
    clock: any Clock<Duration> = ContinuousClock(),
    options: OutboxOptions = OutboxOptions(),
    now: @escaping @Sendable () -> Date = Date.init
  ) async throws(OutboxError) -> Outbox {
    let outbox = Outbox(store: store, clock: clock, options: options, now: now)
    try await outbox.lockSender()
    try await outbox.loadOrUnlock()
    return outbox
  }

  #if Logging
    /// Opens the outbox of `store`, logging what happens to its entries through `logger` (the
    /// `Logging` trait; see ``logger``).
    ///
    /// ```swift
    /// let outbox = try await Outbox.open(SQLiteOutboxStore(url: url), logger: Logger(label: "app.outbox"))
    /// ```
    ///
    /// - Parameters:
    ///   - store: Where the entries live.
    ///   - clock: What retries, stalls and probes wait on.
    ///   - options: Retry policy, concurrency and probe interval.
    ///   - logger: Where the outbox logs.
    ///   - now: The wall clock that dates new entries.
    /// - Throws: ``OutboxError/storeInUse(by:)`` when another outbox sends the store's
    ///   entries; ``OutboxError/store(_:)`` when the store cannot be read.
    public static func open(
      _ store: some OutboxStore,
      clock: any Clock<Duration> = ContinuousClock(),
      options: OutboxOptions = OutboxOptions(),
      logger: Logger,
      now: @escaping @Sendable () -> Date = Date.init
    ) async throws(OutboxError) -> Outbox {
      let outbox = Outbox(store: store, clock: clock, options: options, now: now, logger: logger)
      try await outbox.lockSender()
      try await outbox.loadOrUnlock()
      for damage in await outbox.damaged { log(.quarantined(damage), to: logger) }
      return outbox
    }

    /// Logs `event` at its level: see ``logger``.
    private static func log(_ event: OutboxEvent, to logger: Logger) {
      switch event {
      case .confirmed:
        break
      case .failed(let sequence, let channel, let attempts, let error):
        logger.debug(
          "Kiln outbox: an attempt failed",
          metadata: [
            "kiln_channel": "\(channel)", "kiln_sequence": "\(sequence)", "kiln_attempts": "\(attempts)",
            "error": "\(error)",
          ])
      case .rejected(let sequence, let channel, let status, _, _):
        logger.notice(
          "Kiln outbox: the origin rejected a change; rolled back",
          metadata: ["kiln_channel": "\(channel)", "kiln_sequence": "\(sequence)", "kiln_status": "\(status)"])
      case .replaced(let sequence, let channel):
        logger.notice(
          "Kiln outbox: the origin rejected a change; the resolver's change replaces it",
          metadata: ["kiln_channel": "\(channel)", "kiln_sequence": "\(sequence)"])
      case .stalled(let sequence, let channel):
        logger.warning(
          "Kiln outbox: a scope stalled after its retries; it waits for resume()",
          metadata: ["kiln_channel": "\(channel)", "kiln_sequence": "\(sequence)"])
      case .quarantined(let damage):
        logger.warning(
          "Kiln outbox: an entry was moved to quarantine",
          metadata: [
            "kiln_channel": "\(damage.channel ?? "unknown")", "kiln_sequence": "\(damage.sequence)",
            "kiln_reason": "\(damage.reason)",
          ])
      case .paused:
        logger.warning("Kiln outbox: the origin is unreachable; every scope paused")
      case .resumed:
        logger.info("Kiln outbox: sending resumed")
      }
    }
  #endif

  /// Takes the store's sender lock, when it has one.
  private func lockSender() async throws(OutboxError) {
    guard let store = store as? any SenderLockingOutboxStore else { return }
    let lock: OutboxSenderLock
    do { lock = try await store.lockSender() } catch { throw OutboxError(error) }
    switch lock {
    case .acquired(let lease): senderLease = lease
    case .held(let holder): throw .storeInUse(by: holder)
    }
  }

  /// ``load()``, giving the sender lock back when it fails, so that opening again can take it.
  private func loadOrUnlock() async throws(OutboxError) {
    do {
      try await load()
    } catch {
      let lease = senderLease
      senderLease = nil
      await lease?.release()
      throw error
    }
  }

  private func load() async throws(OutboxError) {
    let loaded: [OutboxLoad]
    do { loaded = try await store.loadAll() } catch { throw OutboxError(error) }
    for item in loaded {
      switch item {
      case .entry(let entry):
        infos[entry.sequence] = Info(entry: entry, lane: Self.lane(of: entry.record), state: .waitingForChannel)
        restoredSequences.insert(entry.sequence)
        restored[entry.record.channel, default: []].append(entry)
      case .damaged(let damage):
        do { try await store.quarantine(damage.sequence, reason: damage.reason) } catch { throw OutboxError(error) }
        counters.add(.quarantined)
        damaged.append(damage)
      }
    }
  }

  private static func lane(of record: OutboxRecord) -> Machine.Lane {
    Machine.Lane(channel: record.channel, scope: Array(record.scope))
  }

  // MARK: - Observing

  /// The entries waiting, oldest first, with how sending each goes.
  public var entries: [OutboxEntrySummary] {
    infos.values.sorted { $0.entry.sequence < $1.entry.sequence }.map { info in
      OutboxEntrySummary(
        sequence: info.entry.sequence, channel: info.entry.record.channel, enqueuedAt: info.entry.record.enqueuedAt,
        attempts: info.entry.attempts, lastError: info.entry.lastError, state: info.state)
    }
  }

  /// Whether every scope waits because the origin is unreachable.
  public var isPaused: Bool { machine.mode == .paused }

  /// Waits until no entry is left: every change confirmed, rejected or quarantined (an app
  /// flushing its writes before it suspends, a server before it stops), or until the outbox
  /// closes. Returns at once when the outbox is empty.
  ///
  /// Entries of channels not attached since ``open(_:clock:options:now:)`` count: they are
  /// still waiting. While the origin is unreachable this waits for it; cancel the calling
  /// task to stop waiting (the entries stay).
  public func waitUntilDrained() async {
    guard !infos.isEmpty, !isClosed else { return }
    let id = nextDrainWaiter
    nextDrainWaiter += 1
    await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        if infos.isEmpty || isClosed || Task.isCancelled {
          continuation.resume()
        } else {
          drainWaiters[id] = continuation
        }
      }
    } onCancel: {
      Task { await self.endDrainWait(id) }
    }
  }

  private func endDrainWait(_ id: UInt64) {
    drainWaiters.removeValue(forKey: id)?.resume()
  }

  /// Resumes the drain waiters once nothing is left (or the outbox closed).
  private func checkDrained() {
    guard !drainWaiters.isEmpty, infos.isEmpty || isClosed else { return }
    let waiters = drainWaiters
    drainWaiters = [:]
    for waiter in waiters.values { waiter.resume() }
  }

  /// What happens to the entries from now on: confirmations, rejections, failures, stalls,
  /// quarantines, pauses. Each call is a new subscription, which ends when the outbox closes
  /// or the iterating task is cancelled; it keeps the newest 4,096 events a slow reader has
  /// not read.
  public nonisolated func events() -> AsyncStream<OutboxEvent> {
    let (stream, continuation) = AsyncStream<OutboxEvent>.makeStream(bufferingPolicy: .bufferingNewest(4_096))
    let id = subscribers.withLock { state in
      defer { state.next += 1 }
      state.all[state.next] = continuation
      return state.next
    }
    continuation.onTermination = { [weak self] _ in
      _ = self?.subscribers.withLock { $0.all.removeValue(forKey: id) }
    }
    return stream
  }

  /// The entries (as ``entries`` lists them) now, then each time they change: an entry added,
  /// sent, failed, retried, stalled, paused, confirmed, rejected or quarantined. A burst of
  /// changes arrives as its last list, and a slow reader gets the newest (never a backlog).
  /// Each call is a new subscription, which ends when the outbox closes or the iterating task
  /// is cancelled.
  public nonisolated func entryUpdates() -> AsyncStream<[OutboxEntrySummary]> {
    let (stream, continuation) = AsyncStream<[OutboxEntrySummary]>.makeStream(bufferingPolicy: .bufferingNewest(1))
    let id = entrySubscribers.withLock { state in
      defer { state.next += 1 }
      state.all[state.next] = continuation
      return state.next
    }
    continuation.onTermination = { [weak self] _ in
      _ = self?.entrySubscribers.withLock { $0.all.removeValue(forKey: id) }
    }
    Task { await self.replayEntries(to: continuation) }
    return stream
  }

  private func replayEntries(to continuation: AsyncStream<[OutboxEntrySummary]>.Continuation) {
    if isClosed {
      continuation.finish()
    } else {
      continuation.yield(entries)
    }
  }

  /// Notes that the entries changed: the subscribers of ``entryUpdates()`` get the new list
  /// once the current burst of work on the actor is over.
  private func entriesChanged() {
    guard !isEntriesFlushScheduled, !entrySubscribers.withLock({ $0.all.isEmpty }) else { return }
    isEntriesFlushScheduled = true
    Task { self.flushEntries() }
  }

  private func flushEntries() {
    isEntriesFlushScheduled = false
    let continuations = entrySubscribers.withLock { Array($0.all.values) }
    guard !continuations.isEmpty, !isClosed else { return }
    let current = entries
    for continuation in continuations { continuation.yield(current) }
  }

  private func publish(_ event: OutboxEvent) {
    #if Logging
      if let logger { Self.log(event, to: logger) }
    #endif
    for continuation in subscribers.withLock({ Array($0.all.values) }) { continuation.yield(event) }
  }

  // MARK: - Control

  /// Sends again now: ends a pause (the app saw the network come back, or the user asked),
  /// restarts stalled scopes and retries waiting for their delay, each with the retry
  /// policy's full count of attempts.
  public func resume() {
    carryOut(machine.resume())
  }

  /// Follows what the app knows of the network (a path monitor, a reachability callback):
  /// `false` pauses every scope at once, without waiting for an attempt to fail (a probe still
  /// goes every ``OutboxOptions/probeInterval``, in case the hint is wrong); `true` resumes as
  /// ``resume()`` does. Until the outbox closes or the sequence ends.
  ///
  /// ```swift
  /// let (reachable, continuation) = AsyncStream<Bool>.makeStream()
  /// monitor.pathUpdateHandler = { continuation.yield($0.status == .satisfied) }
  /// await outbox.observeReachability(reachable)
  /// ```
  ///
  /// - Parameter updates: Whether the origin can be reached, each time that changes.
  public func observeReachability(_ updates: some AsyncSequence<Bool, Never> & Sendable) {
    track { [weak self] in
      for await reachable in updates {
        guard let self else { return }
        await self.reachabilityChanged(reachable)
      }
    }
  }

  private func reachabilityChanged(_ reachable: Bool) {
    guard !isClosed else { return }
    carryOut(reachable ? machine.resume() : machine.pause())
  }

  /// Stops sending: attempts in flight are cancelled, the entries already answered are
  /// removed from the store, and the others stay there for the next
  /// ``open(_:clock:options:now:)``, which the store's sender lock, given back, lets another
  /// outbox make. Appends fail with ``OutboxError/closed``.
  ///
  /// An attempt in flight is cancelled, not awaited: a mutator that ignores cancellation may
  /// still finish sending after `close()` returned, and a new outbox may then send the same
  /// entry again, with the same idempotency key.
  public func close() async {
    guard !isClosed else { return }
    isClosed = true
    let answered = removals
    removals = []
    machine.close()
    for task in tasks.values { task.cancel() }
    tasks = [:]
    for waiter in appendWaiters { waiter.resume() }
    appendWaiters = []
    checkDrained()
    let all = subscribers.withLock { state in
      defer { state.all = [:] }
      return Array(state.all.values)
    }
    for continuation in all { continuation.finish() }
    let entryStreams = entrySubscribers.withLock { state in
      defer { state.all = [:] }
      return Array(state.all.values)
    }
    for continuation in entryStreams { continuation.finish() }
    if !answered.isEmpty { try? await store.remove(answered) }
    let lease = senderLease
    senderLease = nil
    await lease?.release()
  }

  // MARK: - Channels (used by Writes)

  /// Attaches `channel`: its entries loaded from the store come back, for the repository to
  /// show, and the damaged ones, for it to refetch. Call ``release(_:)`` with the entries
  /// once shown, to send them.
  func attach(_ name: String, _ channel: Channel) throws(OutboxError) -> (
    entries: [OutboxEntry], damaged: [OutboxDamage]
  ) {
    guard !isClosed else { throw .closed }
    guard channels[name] == nil else { throw .channelInUse(name) }
    channels[name] = channel
    return (restored.removeValue(forKey: name) ?? [], damaged.filter { $0.channel == name })
  }

  /// Sends the restored entries `entries`, now shown.
  func release(_ entries: [OutboxEntry]) {
    for entry in entries where infos[entry.sequence] != nil {
      infos[entry.sequence]?.state = .waiting
      carryOut(machine.enqueued(entry.sequence, in: Self.lane(of: entry.record), attempts: entry.attempts))
    }
  }

  /// Moves entry `sequence`, which its channel cannot read, to quarantine.
  func quarantine(_ sequence: UInt64, reason: String) async {
    guard let info = infos.removeValue(forKey: sequence) else { return }
    carryOut(machine.dropped(sequence, in: info.lane))
    try? await store.quarantine(sequence, reason: reason)
    let damage = OutboxDamage(
      sequence: sequence, channel: info.entry.record.channel, param: info.entry.record.param, reason: reason)
    counters.add(.quarantined)
    damaged.append(damage)
    publish(.quarantined(damage))
    checkDrained()
    entriesChanged()
  }

  /// Appends `record` durably; the entry waits until ``ready(_:)``.
  func append(_ record: OutboxRecord) async throws(OutboxError) -> UInt64 {
    try await beginAppending()
    defer { endAppending() }
    let sequence: UInt64
    do {
      if let sqlite = store as? SQLiteOutboxStore {
        // Without leaving the actor: two executor hops less per change (measured).
        sequence = try sqlite.appendWithoutSuspending(record)
      } else {
        sequence = try await store.append(record)
      }
    } catch {
      throw OutboxError(error)
    }
    guard !isClosed else { throw .closed }
    let entry = OutboxEntry(sequence: sequence, record: record)
    let lane = Self.lane(of: record)
    infos[sequence] = Info(entry: entry, lane: lane, state: .waiting)
    unshown.insert(sequence)
    counters.add(.appended)
    carryOut(machine.enqueued(sequence, in: lane, ready: false))
    return sequence
  }

  /// Entry `sequence`, appended, is shown: it may be sent.
  func ready(_ sequence: UInt64) {
    unshown.remove(sequence)
    guard let info = infos[sequence] else { return }
    carryOut(machine.entryReady(sequence, in: info.lane))
  }

  /// Appends run one at a time (so that entries reach the sender in sequence order), and so
  /// do coalesced changes (so that "the newest entry of a lane" stays the newest).
  private func beginAppending() async throws(OutboxError) {
    guard !isClosed else { throw .closed }
    if isAppending {
      await withCheckedContinuation { appendWaiters.append($0) }
      guard !isClosed else { throw .closed }
    }
    isAppending = true
  }

  private func endAppending() {
    if appendWaiters.isEmpty {
      isAppending = false
    } else {
      appendWaiters.removeFirst().resume()
    }
  }

  /// Writes `record` over the newest entry of its lane, when that entry may still change: it
  /// is of the same param, shown, not restored from an earlier run, never attempted and not
  /// being sent. The entry keeps its place and sequence, and is not sent until
  /// ``releaseCoalesced(_:)`` (once the new change is shown).
  ///
  /// - Returns: The entry's sequence; `nil` when no entry may be coalesced into (append then).
  func coalesce(_ record: OutboxRecord) async throws(OutboxError) -> UInt64? {
    try await beginAppending()
    defer { endAppending() }
    let lane = Self.lane(of: record)
    var newest: UInt64?
    for (sequence, info) in infos where info.lane == lane && sequence > (newest ?? 0) { newest = sequence }
    guard let sequence = newest, let info = infos[sequence], info.state == .waiting, info.entry.attempts == 0,
      info.entry.record.param == record.param, !unshown.contains(sequence), !restoredSequences.contains(sequence),
      !pinned.contains(sequence)
    else { return nil }
    // It keeps its place in line, so its age too.
    var record = record
    record.enqueuedAt = info.entry.record.enqueuedAt
    pinned.insert(sequence)
    do {
      try await store.replace(sequence, with: record)
    } catch {
      releaseCoalesced(sequence)
      throw OutboxError(error)
    }
    guard !isClosed else { throw .closed }
    infos[sequence]?.entry = OutboxEntry(sequence: sequence, record: record)
    counters.add(.coalesced)
    entriesChanged()
    return sequence
  }

  /// The coalesced change of entry `sequence` is shown: it may be sent.
  func releaseCoalesced(_ sequence: UInt64) {
    pinned.remove(sequence)
    if let attempt = deferredAttempts.removeValue(forKey: sequence) { startAttempt(sequence, attempt: attempt) }
  }

  // MARK: - Carrying out

  private func carryOut(_ actions: [Machine.Action]) {
    for action in actions {
      switch action {
      case .send(let sequence, let attempt, _):
        startAttempt(sequence, attempt: attempt)
      case .scheduleRetry(let lane, let token, let delay):
        for (sequence, info) in infos where info.lane == lane && info.state == .sending {
          infos[sequence]?.state = .retrying
        }
        schedule(after: delay) { outbox in outbox.carryOut(outbox.machine.retryDue(lane, token: token)) }
      case .scheduleProbe(let token, let delay):
        schedule(after: delay) { outbox in outbox.carryOut(outbox.machine.probeDue(token: token)) }
      case .remove(let sequence):
        infos[sequence] = nil
        removals.append(sequence)
        removeConfirmed()
      case .recordFailure(let sequence, let attempts, let error):
        if let info = infos[sequence] {
          infos[sequence]?.entry = OutboxEntry(
            sequence: sequence, record: info.entry.record, attempts: attempts, lastError: error)
        }
        let store = self.store
        track { try? await store.recordFailure(sequence, attempts: attempts, error: error) }
      case .stalled(_, let sequence):
        counters.add(.stalls)
        infos[sequence]?.state = .stalled
        if let info = infos[sequence] { publish(.stalled(sequence: sequence, channel: info.entry.record.channel)) }
      case .paused:
        for sequence in infos.keys where infos[sequence]?.state != .waitingForChannel {
          infos[sequence]?.state = .paused
        }
        counters.add(.pauses)
        counters.setPaused(true)
        publish(.paused)
      case .resumed:
        counters.setPaused(false)
        for sequence in infos.keys where infos[sequence]?.state == .paused || infos[sequence]?.state == .stalled {
          infos[sequence]?.state = .waiting
        }
        publish(.resumed)
      }
    }
    checkDrained()
    entriesChanged()
  }

  /// Removes the entries answered so far from the store, in one transaction, while no
  /// removal runs; those answered meanwhile go in the next one. A kill before an answered
  /// entry is removed sends it again after the restart, under its idempotency key, which the
  /// origin answers without applying it twice.
  private func removeConfirmed() {
    guard !isRemoving, !removals.isEmpty else { return }
    isRemoving = true
    let batch = removals
    removals = []
    let store = self.store
    track { [weak self] in
      try? await store.remove(batch)
      await self?.removalEnded()
    }
  }

  private func removalEnded() {
    isRemoving = false
    removeConfirmed()
  }

  private func startAttempt(_ sequence: UInt64, attempt: Int) {
    if pinned.contains(sequence) {
      deferredAttempts[sequence] = attempt
      return
    }
    guard let info = infos[sequence], let channel = channels[info.entry.record.channel] else { return }
    infos[sequence]?.state = .sending
    counters.add(.attempts)
    entriesChanged()
    let pending = PendingAttempt(entry: info.entry, number: attempt, channel: channel)
    if adoptsAttempt, adoptedAttempt == nil, !isClosed {
      adoptedAttempt = pending
      return
    }
    track { [weak self] in
      // One task runs attempts one after another while each one's end starts the next (the
      // next change of its scope, usually): a drain costs no task per change.
      var next: PendingAttempt? = pending
      while let attempt = next {
        let result = await attempt.channel.attempt(attempt.entry, attempt.number)
        next = await self?.attemptEnded(attempt.entry, result)
      }
    }
  }

  /// Carries out `actions`, the end of an attempt.
  ///
  /// - Returns: The first attempt they start, for the ending attempt's task to run instead of
  ///   a new task.
  private func carryOutAdopting(_ actions: [Machine.Action]) -> PendingAttempt? {
    adoptsAttempt = true
    carryOut(actions)
    adoptsAttempt = false
    defer { adoptedAttempt = nil }
    return adoptedAttempt
  }

  /// Carries out the end of an attempt.
  ///
  /// - Returns: An attempt that the ending attempt's task runs next.
  private func attemptEnded(_ entry: OutboxEntry, _ result: AttemptResult) async -> PendingAttempt? {
    guard !isClosed, let info = infos[entry.sequence] else { return nil }
    let sequence = entry.sequence
    let channel = info.entry.record.channel
    switch result {
    // The machine first: an answer that ends a pause reports `.resumed` before itself.
    case .confirmed:
      counters.add(.confirmed)
      let next = carryOutAdopting(machine.attemptEnded(sequence, in: info.lane, .confirmed))
      publish(.confirmed(sequence: sequence, channel: channel))
      return next
    case .rejected(let status, let body, let error):
      counters.add(.rejected)
      let next = carryOutAdopting(machine.attemptEnded(sequence, in: info.lane, .rejected))
      publish(.rejected(sequence: sequence, channel: channel, status: status, body: body, error: error))
      return next
    case .replaced(let record):
      counters.add(.replaced)
      infos[sequence]?.entry = OutboxEntry(sequence: sequence, record: record)
      infos[sequence]?.state = .waiting
      let next = carryOutAdopting(machine.attemptEnded(sequence, in: info.lane, .replaced))
      publish(.replaced(sequence: sequence, channel: channel))
      return next
    case .retryable(let error), .unreachable(let error):
      let outcome: Machine.Outcome
      if case .unreachable = result {
        counters.add(.unreachable)
        outcome = .unreachable(error)
      } else {
        counters.add(.failed)
        outcome = .retryable(error)
      }
      carryOut(machine.attemptEnded(sequence, in: info.lane, outcome))
      // Still `.sending` unless a retry, a stall or a pause said otherwise.
      if infos[sequence]?.state == .sending { infos[sequence]?.state = .waiting }
      entriesChanged()
      let attempts = infos[sequence]?.entry.attempts ?? 0
      publish(.failed(sequence: sequence, channel: channel, attempts: attempts, error: error))
      if let channelSide = channels[channel] {
        await channelSide.failed(sequence, entry.record.param, attempts, "\(error)")
      }
    case .unreadable(let reason):
      // It leaves its lane as a rejected entry would, but goes to quarantine, not away.
      let actions = machine.attemptEnded(sequence, in: info.lane, .rejected)
      infos[sequence] = nil
      carryOut(actions.filter { $0 != .remove(sequence: sequence) })
      try? await store.quarantine(sequence, reason: reason)
      let damage = OutboxDamage(sequence: sequence, channel: channel, param: entry.record.param, reason: reason)
      counters.add(.quarantined)
      damaged.append(damage)
      publish(.quarantined(damage))
      checkDrained()
    }
    return nil
  }

  /// Runs `body` on the outbox after `delay` on its clock, unless closed first.
  private func schedule(after delay: Duration, _ body: @escaping @Sendable (isolated Outbox) -> Void) {
    let clock = self.clock
    track { [weak self] in
      do { try await clock.sleep(for: delay) } catch { return }
      guard let self else { return }
      await self.run(body)
    }
  }

  private func run(_ body: @Sendable (isolated Outbox) -> Void) {
    guard !isClosed else { return }
    body(self)
  }

  /// Runs `body` in a task that ``close()`` cancels.
  private func track(_ body: @escaping @Sendable () async -> Void) {
    guard !isClosed else { return }
    let id = nextTask
    nextTask += 1
    tasks[id] = Task { [weak self] in
      await body()
      await self?.untrack(id)
    }
  }

  private func untrack(_ id: UInt64) {
    tasks[id] = nil
  }

  /// A new entry's record, dated by the outbox's wall clock.
  nonisolated func date() -> Date { now() }
}

/// What an ``Outbox`` retries and how many changes it sends at once.
public struct OutboxOptions: Sendable {
  /// How often and how long to retry a change whose attempt failed in a way that may pass;
  /// after its last attempt the scope stalls until ``Outbox/resume()``. By default up to 8
  /// attempts, 1 s doubling to 60 s with full jitter, or the origin's `Retry-After`.
  public var retry: RetryPolicy<MutationSendError>
  /// The most attempts running at once, over all scopes; 4 by default.
  public var maxConcurrentSends: Int
  /// How often one change is sent to learn whether an unreachable origin is back; 15 s by default.
  public var probeInterval: Duration

  /// Creates options.
  public init(
    retry: RetryPolicy<MutationSendError> = OutboxOptions.defaultRetry,
    maxConcurrentSends: Int = 4,
    probeInterval: Duration = .seconds(15)
  ) {
    precondition(maxConcurrentSends >= 1, "OutboxOptions: maxConcurrentSends must be at least 1")
    precondition(probeInterval > .zero, "OutboxOptions: probeInterval must be positive")
    self.retry = retry
    self.maxConcurrentSends = maxConcurrentSends
    self.probeInterval = probeInterval
  }

  /// Up to 8 attempts, 1 s doubling to 60 s with full jitter; a `Retry-After` the origin
  /// gave wins over the backoff (capped at 10 minutes).
  public static var defaultRetry: RetryPolicy<MutationSendError> {
    RetryPolicy(
      maxAttempts: 8, backoff: .exponential(initial: .seconds(1), maximum: .seconds(60)),
      delayOverride: { failure, _ in
        guard case .transient(_, let retryAfter?) = failure else { return nil }
        return min(retryAfter, .seconds(600))
      })
  }
}

/// One entry of an ``Outbox``, as ``Outbox/entries`` lists it.
public struct OutboxEntrySummary: Hashable, Sendable {
  /// Where an entry is on its way.
  public enum State: Hashable, Sendable {
    /// Its channel has not attached since the outbox opened.
    case waitingForChannel
    /// Waits for its turn (an earlier change of its scope, or a free attempt).
    case waiting
    /// An attempt is running.
    case sending
    /// Waits for its next attempt after a failure.
    case retrying
    /// Failed as often as the retry policy allows; waits for ``Outbox/resume()``.
    case stalled
    /// The origin is unreachable; waits for it to come back.
    case paused
  }

  /// The entry's sequence number in the store.
  public let sequence: UInt64
  /// The channel (repository) it belongs to.
  public let channel: String
  /// When the change was made.
  public let enqueuedAt: Date
  /// Attempts that failed.
  public let attempts: Int
  /// The last failure, as text.
  public let lastError: String?
  /// Where it is on its way.
  public let state: State
}

/// What happened to an entry of an ``Outbox``, as ``Outbox/events()`` reports it.
public enum OutboxEvent: Sendable {
  /// The origin applied the change; it left the outbox.
  case confirmed(sequence: UInt64, channel: String)
  /// The origin refused the change for good; it left the outbox and the content was
  /// refetched. `error` is the channel's ``MutationRejection``.
  case rejected(sequence: UInt64, channel: String, status: Int, body: Foundation.Data?, error: any Error)
  /// The origin refused the change and the mutator's resolver replaced it; the new change
  /// goes next, with a new idempotency key.
  case replaced(sequence: UInt64, channel: String)
  /// An attempt failed; the change stays.
  case failed(sequence: UInt64, channel: String, attempts: Int, error: MutationSendError)
  /// The change failed as often as the retry policy allows: its scope waits for a resume.
  case stalled(sequence: UInt64, channel: String)
  /// An entry's bytes were damaged, or its channel can no longer read it: it was moved to
  /// the store's quarantine.
  case quarantined(OutboxDamage)
  /// The origin is unreachable: every scope waits.
  case paused
  /// Sending goes on.
  case resumed
}

/// Why an outbox operation failed. Nothing was written, and nothing shown, when it throws.
public enum OutboxError: Error, Sendable, CustomStringConvertible {
  /// The disk (or the store's size limit) is full.
  case storageFull
  /// The change, encoded, is larger than the store accepts.
  case recordTooLarge(size: Int, limit: Int)
  /// The param or the change could not be encoded.
  case encodingFailed(any Error)
  /// Another repository already writes on this channel of the outbox.
  case channelInUse(String)
  /// The outbox was closed.
  case closed
  /// The store failed.
  case store(OutboxStoreError)
  /// Another outbox sends this store's entries (in this process or another; see ``Outbox``):
  /// who holds the store's sender lock, as the store can tell.
  case storeInUse(by: String)

  init(_ error: OutboxStoreError) {
    switch error {
    case .storageFull: self = .storageFull
    case .recordTooLarge(let size, let limit): self = .recordTooLarge(size: size, limit: limit)
    case .closed: self = .closed
    default: self = .store(error)
    }
  }

  public var description: String {
    switch self {
    case .storageFull: "Outbox: the storage is full; the change was not made"
    case .recordTooLarge(let size, let limit): "Outbox: a change of \(size) bytes exceeds the limit of \(limit)"
    case .encodingFailed(let error): "Outbox: the change could not be encoded: \(error)"
    case .channelInUse(let channel): "Outbox: channel \(String(reflecting: channel)) is already attached"
    case .closed: "Outbox: closed"
    case .store(let error): "\(error)"
    case .storeInUse(let holder): "Outbox: another outbox sends this store's entries (\(holder))"
    }
  }
}
