import Foundation
import KilnRepository
import KilnRepositoryTesting
import KilnTesting
import Testing
import _KilnSynchronization

/// Local writes through an outbox: shown at once as pending, sent in order, confirmed,
/// rejected, retried, paused and restored; each on a manual clock, with the origin played by
/// a `ControlledMutator` and the reads by a `ControlledFetcher`.
@Suite(.timeLimit(.minutes(1)))
struct WritesTests {
  let clock = ManualClock()
  let memory: MemoryCache<String, Int>
  let repository: Repository<String, Int>
  let fetcher = ControlledFetcher<String, Int>()
  /// A change sets the value.
  let mutator = ControlledMutator<String, Int, Int> { change, _ in change }

  init() {
    memory = MemoryCache(entryLifetime: nil, now: clock.dateProvider)
    repository = Repository(store: memory, clock: clock)
  }

  func flowable(_ param: String = "a") -> AnyStoreFlowable<Int> {
    AnyStoreFlowable.from(cacher: repository, fetcher: fetcher, param: param)
  }

  /// An outbox over `store` and the writes of `repository` through `mutator`.
  func writes(
    store: some OutboxStore = MemoryOutboxStore(), options: OutboxOptions = WritesTests.options,
    mutator: ControlledMutator<String, Int, Int>? = nil, repository: Repository<String, Int>? = nil,
    scope: @escaping @Sendable (String) -> String? = { _ in nil }, coalescing: WriteCoalescing = .never
  ) async throws -> (Outbox, Writes<String, Int, Int>) {
    let outbox = try await Outbox.open(store, clock: clock, options: options, now: clock.dateProvider)
    let writes = try await (repository ?? self.repository).writes(
      through: mutator ?? self.mutator, outbox: outbox, channel: "counts", paramCodec: .automatic,
      changeCodec: .automatic, scope: scope, coalescing: coalescing)
    return (outbox, writes)
  }

  /// Two attempts 10 s apart without jitter, 4 at once, probes every 30 s.
  static var options: OutboxOptions {
    OutboxOptions(
      retry: RetryPolicy(maxAttempts: 2, backoff: .constant(.seconds(10)), jitter: .none),
      maxConcurrentSends: 4, probeInterval: .seconds(30))
  }

  /// Shows cached 1 for "a" to a new subscriber.
  func subscribedOverCached(_ value: Int = 1, param: String = "a") async -> LoadingStateRecorder<Int> {
    memory[param] = value
    let states = LoadingStateRecorder(flowable(param).publish())
    await states.waitForState { $0.content == value }
    return states
  }

  static func events(_ outbox: Outbox) -> Recorder<OutboxEvent> {
    let recorder = Recorder<OutboxEvent>()
    let events = outbox.events()
    Task {
      for await event in events { recorder.append(event) }
    }
    return recorder
  }

  // MARK: - Shown at once, confirmed

  @Test("mutate shows the change at once as pending; the confirmation clears it, caches it and validates once")
  func mutateThenConfirm() async throws {
    let states = await subscribedOverCached()
    let (outbox, writes) = try await self.writes()
    let ticket = try await writes.mutate("a", 5)

    let pending = try #require(await states.waitForSnapshot { $0.pending != nil })
    #expect(pending.state == completed(5))
    #expect(pending.origin == .update)
    #expect(pending.pending?.count == 1)
    #expect(memory["a"] == 1, "only the base is cached while the change is pending")

    await mutator.waitForSend(0)
    #expect(mutator.sends[0].param == "a")
    #expect(mutator.sends[0].change == 5)
    #expect(mutator.sends[0].key == ticket.key)
    mutator.confirm(0)
    // Validated once: the origin sent no content with its confirmation.
    await fetcher.waitForCall(0)
    fetcher.succeed(0, with: 5)
    await states.waitForCount(4)
    #expect(states.snapshots.last?.pending == nil)
    #expect(memory["a"] == 5)
    #expect(fetcher.callCount == 1)
    #expect(await outbox.entries.isEmpty)
    var expected = OutboxStatistics()
    expected.appended = 1
    expected.attempts = 1
    expected.confirmed = 1
    #expect(outbox.statistics == expected)
    #expect(counterValue(outbox.counterReadings(), "kiln_outbox_attempt_results_total", [("result", "confirmed")]) == 1)
    // No state twice for a plain subscriber: cached 1, the change, the validation's loading, 5.
    #expect(states.states == [completed(1), completed(5), .loading(content: 5), completed(5)])
    await states.stop()
    await outbox.close()
  }

  @Test("a confirmation with the origin's content takes it as the truth, without refetching")
  func confirmWithContent() async throws {
    let states = await subscribedOverCached()
    let (outbox, writes) = try await self.writes()
    try await writes.mutate("a", 5)
    await mutator.waitForSend(0)
    mutator.confirm(0, with: 6)
    await states.waitForState { $0 == completed(6) }
    #expect(memory["a"] == 6)
    #expect(states.snapshots.last?.pending == nil)
    #expect(states.snapshots.last?.origin == .fetcher)
    #expect(fetcher.callCount == 0)
    await states.stop()
    await outbox.close()
  }

  @Test("sending progress changes only the pending status: plain subscribers see no repeated state")
  func pendingOnlySnapshots() async throws {
    let states = await subscribedOverCached()
    let plain = LoadingStateRecorder(flowable().publish())
    await plain.waitForCount(1)
    let (outbox, writes) = try await self.writes()
    try await writes.mutate("a", 5)
    await mutator.waitForSend(0)
    await states.waitForSnapshot { ($0.pending?.sendingCount ?? 0) == 1 }
    mutator.fail(0, with: .transient(TestError("503"), retryAfter: nil))
    let failed = try #require(await states.waitForSnapshot { $0.pending?.failedAttempts == 1 })
    #expect(failed.state == completed(5), "a failed send is no error state")
    #expect(failed.pending?.lastFailure?.contains("503") == true)
    #expect(failed.stateUnchanged)
    #expect(plain.states == [completed(1), completed(5)])
    #expect(states.states == [completed(1), completed(5)])
    #expect(states.snapshots.count > states.states.count)
    await states.stop()
    await plain.stop()
    await outbox.close()
  }

  // MARK: - Reads while pending

  @Test("a refresh while a change is pending shows the origin's content with the change on top")
  func refreshKeepsPending() async throws {
    let states = await subscribedOverCached()
    let (outbox, writes) = try await self.writes()
    try await writes.mutate("a", 5)
    await mutator.waitForSend(0)
    let refresh = Task { await flowable().refresh() }
    await fetcher.waitForCall(0)
    fetcher.succeed(0, with: 2)
    await refresh.value
    #expect(memory["a"] == 2, "the origin's content is cached")
    #expect(states.states.last == completed(5), "the pending change stays on top")
    #expect(try await flowable().requireData(from: .cache) == 5, "reads return what is shown")
    mutator.confirm(0)
    await fetcher.waitForCall(1)
    fetcher.succeed(1, with: 5)
    await states.waitForState { $0 == completed(5) && states.snapshots.last?.pending == nil }
    await states.stop()
    await outbox.close()
  }

  @Test("a fetch started before a confirmation cannot undo it; one validation follows")
  func fetchBeforeConfirmation() async throws {
    let states = await subscribedOverCached()
    let (outbox, writes) = try await self.writes()
    try await writes.mutate("a", 5)
    await mutator.waitForSend(0)
    let refresh = Task { await flowable().refresh() }
    await fetcher.waitForCall(0)
    mutator.confirm(0)
    // The confirmation supersedes the fetch in flight and validates with a new one.
    await fetcher.waitForCall(1)
    fetcher.succeed(0, with: 1)  // the origin's answer from before the write
    await refresh.value
    #expect(states.states.last?.content == 5)
    #expect(memory["a"] == 5)
    fetcher.succeed(1, with: 5)
    await states.waitForState { $0 == completed(5) && states.snapshots.last?.pending == nil }
    #expect(!states.states.contains { $0.content == 1 && states.states.firstIndex(of: $0)! > 0 })
    #expect(fetcher.callCount == 2)
    await states.stop()
    await outbox.close()
  }

  @Test("requireData from the origin returns the fetched content with the pending changes")
  func requireFromOrigin() async throws {
    let (outbox, writes) = try await self.writes()
    memory["a"] = 1
    try await writes.mutate("a", 5)
    let read = Task { try await flowable().requireData(from: .origin) }
    await fetcher.waitForCall(0)
    fetcher.succeed(0, with: 2)
    #expect(try await read.value == 5)
    await outbox.close()
  }

  @Test("a never-read param shows a change over its cached content; it is not released while pending")
  func neverReadParam() async throws {
    let repository = Repository<String, Int>(store: memory, clock: clock, releaseAfter: .zero)
    let (outbox, writes) = try await self.writes(repository: repository)
    memory["b"] = 3
    try await writes.mutate("b", 9)
    #expect(repository.params == ["b"])
    let states = LoadingStateRecorder(AnyStoreFlowable.from(cacher: repository, fetcher: fetcher, param: "b").publish())
    let shown = try #require(await states.waitForSnapshot { $0.state.content != nil })
    #expect(shown.state.content == 9)
    #expect(shown.pending?.count == 1)
    await states.stop()
    clock.advance(by: .seconds(1))
    #expect(repository.params == ["b"], "a param with a pending change is kept")
    await mutator.waitForSend(0)
    mutator.confirm(0, with: 9)
    await mutator.waitForEndedSends(1)
    try await waitUntil { repository.params.isEmpty }
    #expect(memory["b"] == 9)
    await outbox.close()
  }

  // MARK: - Order

  @Test("changes of one scope go one at a time in order; other scopes go in parallel, bounded")
  func orderPerScope() async throws {
    let options = OutboxOptions(retry: Self.options.retry, maxConcurrentSends: 2, probeInterval: .seconds(30))
    let (outbox, writes) = try await self.writes(options: options)
    try await writes.mutate("a", 1)
    try await writes.mutate("a", 2)
    try await writes.mutate("b", 1)
    try await writes.mutate("c", 1)
    await mutator.waitForSend(1)
    #expect(mutator.sends.map(\.param).sorted() == ["a", "b"], "a's second waits for its first; c for a free slot")
    let first = try #require(mutator.sends.firstIndex { $0.param == "a" })
    mutator.confirm(first)
    await mutator.waitForSend(2)
    #expect(mutator.sends[2].param == "a" && mutator.sends[2].change == 2)
    mutator.confirm(2)
    await mutator.waitForSend(3)
    #expect(mutator.sends[3].param == "c")
    await outbox.close()
  }

  @Test(
    "lastWriteWins: a change takes the place of the param's newest waiting change, in the store and on screen, under a new key; the change in flight is kept"
  )
  func lastWriteWins() async throws {
    let states = await subscribedOverCached()
    let store = MemoryOutboxStore()
    let (outbox, writes) = try await self.writes(store: store, coalescing: .lastWriteWins)
    #expect(writes.coalescing == .lastWriteWins)
    let inFlight = try await writes.mutate("a", 2)
    await mutator.waitForSend(0)
    let waiting = try await writes.mutate("a", 3)  // queued behind the one in flight
    let second = try await writes.mutate("a", 4)
    let last = try await writes.mutate("a", 5)
    #expect(waiting.sequence != inFlight.sequence)
    #expect(second.sequence == waiting.sequence && last.sequence == waiting.sequence)
    #expect(Set([waiting.key, second.key, last.key]).count == 3, "a replaced change gets a new key")
    #expect(await outbox.entries.map(\.sequence) == [inFlight.sequence, waiting.sequence])
    let shown = try #require(await states.waitForSnapshot { $0.state.content == 5 })
    #expect(shown.pending?.count == 2)
    guard case .entry(let stored) = try await store.loadAll().last else { throw TestError("no entry") }
    #expect(stored.sequence == waiting.sequence)
    #expect(stored.record.idempotencyKey == last.key)

    mutator.confirm(0)
    await mutator.waitForSend(1)
    #expect(mutator.sends[1].change == 5)
    #expect(mutator.sends[1].key == last.key)
    mutator.confirm(1)
    await fetcher.waitForCall(0)
    fetcher.succeed(0, with: 5)
    await states.waitForState { $0 == completed(5) }
    #expect(mutator.sendCount == 2)
    #expect(outbox.statistics.appended == 2)
    #expect(outbox.statistics.coalesced == 2)
    #expect(counterValue(outbox.counterReadings(), "kiln_outbox_coalesced_total") == 2)
    await states.stop()
    await outbox.close()
  }

  @Test(
    "lastWriteWins never replaces another param's change, a change being sent, or a change restored after a restart")
  func lastWriteWinsLimits() async throws {
    let store = MemoryOutboxStore()
    do {
      // One scope for every param: "b"'s change is the newest of the lane, and is not "a"'s.
      let (outbox, writes) = try await self.writes(
        store: store, scope: { _ in "all" }, coalescing: .lastWriteWins)
      try await writes.mutate("a", 1)  // in flight
      await mutator.waitForSend(0)
      try await writes.mutate("a", 2)  // in flight already: a new entry
      try await writes.mutate("b", 7)
      try await writes.mutate("a", 3)
      #expect(await outbox.entries.count == 4)
      #expect(outbox.statistics.coalesced == 0)
      await outbox.close()
    }
    // After a restart the entries are restored: a change may have been sent before the kill.
    let mutator = ControlledMutator<String, Int, Int> { change, _ in change }
    let (outbox, writes) = try await self.writes(
      store: store, mutator: mutator, scope: { _ in "all" }, coalescing: .lastWriteWins)
    await mutator.waitForSend(0)  // the restored head; "a"'s restored change waits behind it
    try await writes.mutate("a", 4)
    #expect(await outbox.entries.count == 5)
    #expect(outbox.statistics.coalesced == 0)
    await outbox.close()
  }

  @Test("concurrent mutates of one param are sent in the order they are shown")
  func concurrentMutatesKeepOrder() async throws {
    let (outbox, writes) = try await self.writes()
    await withTaskGroup(of: Void.self) { group in
      for value in 1...20 {
        group.addTask { _ = try? await writes.mutate("a", value) }
      }
    }
    let sequences = await outbox.entries.map(\.sequence)
    #expect(sequences.count == 20)
    for index in 0..<20 {
      await mutator.waitForSend(index)
      mutator.confirm(index)
    }
    await mutator.waitForEndedSends(20)
    // The last change in sequence order is what the origin was sent last and what shows.
    let sent = mutator.sends.map(\.change)
    #expect(Set(sent) == Set(1...20))
    try await waitUntil { await outbox.entries.isEmpty }
    #expect(memory["a"] == sent.last)
    await outbox.close()
  }

  @Test("waitUntilDrained returns once every change is answered, at once when empty, and on cancellation")
  func drained() async throws {
    let (outbox, writes) = try await self.writes()
    await outbox.waitUntilDrained()  // empty: at once
    try await writes.mutate("a", 1)
    try await writes.mutate("b", 2)
    let waiter = Task {
      await outbox.waitUntilDrained()
      return await outbox.entries.count
    }
    let cancelled = Task { await outbox.waitUntilDrained() }
    cancelled.cancel()
    await cancelled.value
    await mutator.waitForSend(1)
    mutator.confirm(0)
    mutator.fail(1, with: .rejected(status: 422, body: nil))
    #expect(await waiter.value == 0)
    await outbox.close()
  }

  @Test("entryUpdates lists the entries now, then after each change, newest first when late")
  func entryUpdates() async throws {
    let (outbox, writes) = try await self.writes()
    let lists = Recorder<[OutboxEntrySummary]>()
    let updates = outbox.entryUpdates()
    let reader = Task {
      for await list in updates { lists.append(list) }
    }
    await lists.waitForCount(1)
    #expect(lists.values.first == [])
    try await writes.mutate("a", 1)
    await mutator.waitForSend(0)
    try await waitUntil { lists.values.last?.map(\.state) == [.sending] }
    mutator.fail(0, with: .transient(TestError("503"), retryAfter: nil))
    try await waitUntil { lists.values.last?.first?.state == .retrying }
    #expect(lists.values.last?.first?.attempts == 1)
    #expect(lists.values.last?.first?.lastError?.contains("503") == true)
    clock.advance(by: .seconds(10))
    await mutator.waitForSend(1)
    mutator.confirm(1)
    try await waitUntil { lists.values.last == [] }
    await outbox.close()
    await reader.value
  }

  @Test("OutboxModel shows the entries, the pause and the rejections on the main actor")
  @MainActor
  func model() async throws {
    let (outbox, writes) = try await self.writes()
    let model = OutboxModel(outbox)
    try await writes.mutate("a", 1)
    try await writes.mutate("b", 2)
    try await waitUntil { await MainActor.run { model.entries.count == 2 } }
    await mutator.waitForSend(1)
    let first = mutator.sends[0].param == "a" ? 0 : 1
    // The rejection first: any answer from the origin ends a pause, so its order matters.
    mutator.fail(first, with: .rejected(status: 409, body: nil))
    try await waitUntil { await MainActor.run { model.rejections.count == 1 } }
    mutator.fail(1 - first, with: .unreachable(URLError(.notConnectedToInternet)))
    // The entries and the events come by two streams: wait for both.
    let deadline = ContinuousClock.now.advanced(by: .seconds(10))
    while !(model.isPaused && model.rejections.count == 1 && model.entries.map(\.state) == [.paused]) {
      guard ContinuousClock.now < deadline else {
        Issue.record(
          "paused \(model.isPaused), rejections \(model.rejections.count), entries \(model.entries), last \(String(describing: model.lastEvent)), outbox \(await outbox.entries) \(await outbox.isPaused)"
        )
        return
      }
      try await Task.sleep(for: .milliseconds(1))
    }
    await model.resume()
    await mutator.waitForSend(2)
    #expect(!model.isPaused || mutator.sendCount == 3)
    mutator.confirm(2)
    try await waitUntil { await MainActor.run { model.entries.isEmpty && !model.isPaused } }
    await outbox.close()
  }

  // MARK: - Rejections

  @Test("a rejection without a resolver rolls back, refetches and reports the rejected change")
  func rejectionWithoutResolver() async throws {
    let states = await subscribedOverCached()
    let (outbox, writes) = try await self.writes()
    let events = Self.events(outbox)
    try await writes.mutate("a", 5)
    await mutator.waitForSend(0)
    mutator.fail(0, with: .rejected(status: 409, body: Data("conflict".utf8)))
    await fetcher.waitForCall(0)
    #expect(states.states.last?.content == 1, "rolled back to the base at once")
    fetcher.succeed(0, with: 4)
    await states.waitForState { $0 == completed(4) }
    await events.waitForCount(1)
    guard case .rejected(_, let channel, let status, let body, let error) = events.values.first else {
      Issue.record("no rejection: \(events.values)")
      return
    }
    #expect(channel == "counts")
    #expect(status == 409)
    #expect(body == Data("conflict".utf8))
    let rejection = try #require(error as? MutationRejection<String, Int>)
    #expect(rejection.param == "a" && rejection.change == 5)
    #expect(await outbox.entries.isEmpty)
    #expect(try await outbox.store.loadAll().isEmpty)
    #expect(states.snapshots.last?.pending == nil)
    #expect(outbox.statistics.rejected == 1)
    #expect(outbox.statistics.pending == 0)
    await states.stop()
    await outbox.close()
  }

  @Test("a resolver's change replaces the rejected one in place, with a new key")
  func rejectionWithResolver() async throws {
    let mutator = ControlledMutator<String, Int, Int>(resolve: { $0.change + 100 }, apply: { change, _ in change })
    let states = await subscribedOverCached()
    let (outbox, writes) = try await self.writes(mutator: mutator)
    let events = Self.events(outbox)
    let ticket = try await writes.mutate("a", 5)
    try await writes.mutate("a", 6)
    await mutator.waitForSend(0)
    mutator.fail(0, with: .rejected(status: 422, body: nil))
    await mutator.waitForSend(1)
    #expect(mutator.sends[1].change == 105, "the replacement goes first, before the later change")
    #expect(mutator.sends[1].key != ticket.key)
    #expect(states.states.last?.content == 6, "the later change stays on top of the replacement")
    let stored = try await outbox.store.loadAll()
    guard case .entry(let entry) = stored.first else { throw TestError("no entry") }
    #expect(entry.sequence == ticket.sequence, "replaced in place")
    #expect(entry.record.idempotencyKey == mutator.sends[1].key)
    mutator.confirm(1)
    await mutator.waitForSend(2)
    #expect(mutator.sends[2].change == 6)
    mutator.confirm(2)
    await fetcher.waitForCall(0)
    fetcher.succeed(0, with: 6)
    await states.waitForState { $0 == completed(6) && states.snapshots.last?.pending == nil }
    await events.waitForCount(3)
    guard case .replaced(let sequence, _) = events.values.first else {
      Issue.record("no replacement: \(events.values)")
      return
    }
    #expect(sequence == ticket.sequence)
    #expect(outbox.statistics.appended == 2)
    #expect(outbox.statistics.attempts == 3)
    #expect(outbox.statistics.replaced == 1)
    #expect(outbox.statistics.rejected == 0)
    #expect(outbox.statistics.confirmed == 2)
    await states.stop()
    await outbox.close()
  }

  // MARK: - Failures that may pass

  @Test("a transient failure retries on the clock; after the last attempt the scope stalls until resumed")
  func retryStallResume() async throws {
    let states = await subscribedOverCached()
    let (outbox, writes) = try await self.writes()
    let events = Self.events(outbox)
    try await writes.mutate("a", 5)
    await mutator.waitForSend(0)
    mutator.fail(0, with: .transient(TestError("503"), retryAfter: nil))
    try await waitUntil { clock.sleeperCount > 0 }
    #expect(await outbox.entries.first?.state == .retrying)
    #expect(mutator.sendCount == 1)
    clock.advance(by: .seconds(10))
    await mutator.waitForSend(1)
    #expect(mutator.sends[1].key == mutator.sends[0].key, "every attempt carries the same key")
    mutator.fail(1, with: .outstanding)
    try await waitUntil { await outbox.entries.first?.state == .stalled }
    #expect(await outbox.entries.first?.attempts == 2)
    #expect(states.states.last == completed(5), "a stalled change stays shown")
    clock.advance(by: .seconds(600))
    #expect(mutator.sendCount == 2)
    await outbox.resume()
    await mutator.waitForSend(2)
    mutator.confirm(2, with: 5)
    try await waitUntil { await outbox.entries.isEmpty }
    await events.waitForCount(4)  // failed, stalled, failed, confirmed
    #expect(events.values.contains { if case .stalled = $0 { true } else { false } })
    #expect(outbox.statistics.failed == 2)
    #expect(outbox.statistics.stalls == 1)
    #expect(outbox.statistics.attempts == 3)
    #expect(outbox.statistics.confirmed == 1)
    await states.stop()
    await outbox.close()
  }

  @Test("Retry-After wins over the backoff")
  func retryAfter() async throws {
    let (outbox, writes) = try await self.writes()
    try await writes.mutate("a", 5)
    await mutator.waitForSend(0)
    mutator.fail(0, with: .transient(TestError("429"), retryAfter: .seconds(42)))
    try await waitUntil { clock.sleeperCount > 0 }
    clock.advance(by: .seconds(41))
    #expect(mutator.sendCount == 1)
    clock.advance(by: .seconds(1))
    await mutator.waitForSend(1)
    await outbox.close()
  }

  @Test("an unreachable origin pauses every scope; a probe that gets through resumes them all")
  func unreachablePausesAndProbes() async throws {
    let (outbox, writes) = try await self.writes(
      options: OutboxOptions(maxConcurrentSends: 1, probeInterval: .seconds(30)))
    let events = Self.events(outbox)
    try await writes.mutate("a", 1)
    try await writes.mutate("b", 1)
    await mutator.waitForSend(0)
    mutator.fail(0, with: .unreachable(URLError(.notConnectedToInternet)))
    try await waitUntil { await outbox.isPaused }
    #expect(await outbox.entries.allSatisfy { $0.state == .paused })
    #expect(outbox.statistics.isPaused)
    #expect(outbox.statistics.pending == 2)
    #expect(counterValue(outbox.counterReadings(), "kiln_outbox_paused") == 1)
    try await waitUntil { clock.sleeperCount > 0 }
    #expect(mutator.sendCount == 1, "nothing is sent while paused")
    clock.advance(by: .seconds(30))
    await mutator.waitForSend(1)
    #expect(mutator.sends[1].param == "a", "the oldest head probes")
    mutator.confirm(1, with: 1)
    await mutator.waitForSend(2)
    #expect(mutator.sends[2].param == "b")
    #expect(await !outbox.isPaused)
    mutator.confirm(2, with: 1)
    try await waitUntil { await outbox.entries.isEmpty }
    await events.waitForCount(5)
    let kinds = events.values.map { event -> String in
      switch event {
      case .paused: "paused"
      case .resumed: "resumed"
      case .confirmed: "confirmed"
      case .failed: "failed"
      default: "other"
      }
    }
    #expect(kinds == ["paused", "failed", "resumed", "confirmed", "confirmed"])
    #expect(outbox.statistics.unreachable == 1)
    #expect(outbox.statistics.pauses == 1)
    #expect(!outbox.statistics.isPaused)
    #expect(outbox.statistics.confirmed == 2)
    await outbox.close()
  }

  @Test("a reachability hint pauses every scope at once on false, and resumes them on true")
  func reachabilityHint() async throws {
    let (outbox, writes) = try await self.writes()
    let (updates, continuation) = AsyncStream<Bool>.makeStream()
    await outbox.observeReachability(updates)
    continuation.yield(false)
    try await waitUntil { await outbox.isPaused }
    try await writes.mutate("a", 1)
    try await waitUntil { clock.sleeperCount > 0 }  // the probe, in case the hint is wrong
    #expect(mutator.sendCount == 0, "nothing is sent while paused")
    continuation.yield(true)
    await mutator.waitForSend(0)
    #expect(await !outbox.isPaused)
    mutator.confirm(0, with: 1)
    try await waitUntil { await outbox.entries.isEmpty }
    #expect(outbox.statistics.pauses == 1)
    continuation.finish()
    await outbox.close()
  }

  @Test("resume() ends a pause at once")
  func resumeEndsPause() async throws {
    let (outbox, writes) = try await self.writes()
    try await writes.mutate("a", 1)
    await mutator.waitForSend(0)
    mutator.fail(0, with: .unreachable(URLError(.cannotConnectToHost)))
    try await waitUntil { await outbox.isPaused }
    await outbox.resume()
    await mutator.waitForSend(1)
    #expect(await !outbox.isPaused)
    await outbox.close()
  }

  // MARK: - Durability and bad input

  @Test("after a restart the changes come back as pending and are sent with their keys, in order")
  func restoredAfterRestart() async throws {
    try await withTemporaryDirectory { directory in
      let url = directory.appendingPathComponent("outbox.sqlite")
      var keys: [IdempotencyKey] = []
      do {
        let store = try SQLiteOutboxStore(url: url)
        let (outbox, writes) = try await self.writes(store: store)
        keys.append(try await writes.mutate("a", 5).key)
        keys.append(try await writes.mutate("a", 6).key)
        keys.append(try await writes.mutate("b", 7).key)
        await outbox.close()
        await store.close()
      }
      // A new process: a new repository, mutator and outbox over the same file.
      let repository = Repository<String, Int>(store: MemoryCache(), clock: clock)
      let mutator = ControlledMutator<String, Int, Int> { change, _ in change }
      let store = try SQLiteOutboxStore(url: url)
      let (outbox, _) = try await self.writes(store: store, mutator: mutator, repository: repository)
      let states = LoadingStateRecorder(
        AnyStoreFlowable.from(cacher: repository, fetcher: fetcher, param: "a").publish())
      let shown = try #require(await states.waitForSnapshot { $0.pending != nil })
      #expect(shown.state.content == 6)
      #expect(shown.pending?.count == 2)
      await mutator.waitForSend(1)
      #expect(Set(mutator.sends.map(\.key)) == [keys[0], keys[2]], "a's first and b's, with their first keys")
      let first = try #require(mutator.sends.firstIndex { $0.param == "a" })
      mutator.confirm(first)
      await mutator.waitForSend(2)
      #expect(mutator.sends[2].key == keys[1])
      await states.stop()
      await outbox.close()
      await store.close()
    }
  }

  @Test("one outbox per store: a second open is refused and names the holder, until the first closes")
  func oneOutboxPerStore() async throws {
    try await withTemporaryDirectory { directory in
      let url = directory.appendingPathComponent("outbox.sqlite")
      let first = try await Outbox.open(try SQLiteOutboxStore(url: url), clock: clock, options: Self.options)
      for store in [try SQLiteOutboxStore(url: url), first.store] as [any OutboxStore] {
        var refusal: OutboxError?
        do throws(OutboxError) {
          _ = try await Outbox.open(store, clock: clock, options: Self.options)
        } catch {
          refusal = error
        }
        guard case .storeInUse(let holder)? = refusal else {
          Issue.record("expected storeInUse, got \(String(describing: refusal))")
          return
        }
        #expect(holder == "process \(getpid()) (this one)")
        #expect(refusal?.description.contains("another outbox sends this store's entries") == true)
      }
      await first.close()
      let second = try await Outbox.open(try SQLiteOutboxStore(url: url), clock: clock, options: Self.options)
      await second.close()
      // A memory store allows one outbox too.
      let memory = MemoryOutboxStore()
      let third = try await Outbox.open(memory, clock: clock, options: Self.options)
      await #expect(throws: OutboxError.self) { _ = try await Outbox.open(memory, clock: clock, options: Self.options) }
      await third.close()
      _ = try await Outbox.open(memory, clock: clock, options: Self.options)
    }
  }

  /// A memory store whose first `loadAll` fails.
  actor StoreFailingFirstLoad: SenderLockingOutboxStore {
    let base = MemoryOutboxStore()
    var failNextLoad = true

    func append(_ record: OutboxRecord) async throws(OutboxStoreError) -> UInt64 { try await base.append(record) }
    func replace(_ sequence: UInt64, with record: OutboxRecord) async throws(OutboxStoreError) {
      try await base.replace(sequence, with: record)
    }
    func remove(_ sequences: [UInt64]) async throws(OutboxStoreError) { try await base.remove(sequences) }
    func recordFailure(_ sequence: UInt64, attempts: Int, error: String) async throws(OutboxStoreError) {
      try await base.recordFailure(sequence, attempts: attempts, error: error)
    }
    func loadAll() async throws(OutboxStoreError) -> [OutboxLoad] {
      if failNextLoad {
        failNextLoad = false
        throw .failed(TestError("disk unreadable"))
      }
      return try await base.loadAll()
    }
    func quarantine(_ sequence: UInt64, reason: String) async throws(OutboxStoreError) {
      try await base.quarantine(sequence, reason: reason)
    }
    func quarantined() async throws(OutboxStoreError) -> [OutboxQuarantined] { try await base.quarantined() }
    func lockSender() async throws(OutboxStoreError) -> OutboxSenderLock { try await base.lockSender() }
  }

  @Test("an open that fails after taking the sender lock gives it back: opening again works")
  func failedOpenUnlocks() async throws {
    let store = StoreFailingFirstLoad()
    await #expect(throws: OutboxError.self) { _ = try await Outbox.open(store, clock: clock, options: Self.options) }
    let outbox = try await Outbox.open(store, clock: clock, options: Self.options)
    await outbox.close()
  }

  @Test("a full store is a typed error, and the change is not shown")
  func storageFull() async throws {
    try await withTemporaryDirectory { directory in
      let store = try SQLiteOutboxStore(url: directory.appendingPathComponent("outbox.sqlite"), maximumBytes: 64 * 1024)
      let states = await subscribedOverCached()
      let outbox = try await Outbox.open(store, clock: clock, options: Self.options)
      let big = try await repository.writes(
        through: ControlledMutator<String, Int, String> { change, _ in change.count }, outbox: outbox, channel: "big",
        paramCodec: .automatic, changeCodec: .automatic)
      var made = 0
      var thrown: OutboxError?
      for _ in 0..<20 {
        do throws(OutboxError) {
          try await big.mutate("a", String(repeating: "x", count: 16 * 1024))
          made += 1
        } catch {
          thrown = error
          break
        }
      }
      guard case .storageFull = thrown else {
        Issue.record("expected storageFull, got \(String(describing: thrown)) after \(made) changes")
        return
      }
      #expect(made > 0)
      let last = try #require(await states.waitForSnapshot { $0.pending?.count == made })
      #expect(last.pending?.count == made, "the failed change shows nothing")
      #expect(await outbox.entries.count == made)
      await states.stop()
      await outbox.close()
      await store.close()
    }
  }

  @Test("an entry damaged on disk is quarantined and reported, its param refetched, and the others sent")
  func damagedEntry() async throws {
    try await withTemporaryDirectory { directory in
      let url = directory.appendingPathComponent("outbox.sqlite")
      do {
        // Another process's repository and origin: this one starts after the damage.
        let store = try SQLiteOutboxStore(url: url)
        let (outbox, writes) = try await self.writes(
          store: store, mutator: ControlledMutator { change, _ in change },
          repository: Repository(store: MemoryCache(), clock: clock))
        try await writes.mutate("a", 5)
        try await writes.mutate("damaged-param", 123_456_789)
        try await writes.mutate("b", 7)
        await outbox.close()
        try await store.checkpoint()
        await store.close()
      }
      var bytes = try Data(contentsOf: url)
      let range = try #require(bytes.firstRange(of: Data("123456789".utf8)))
      bytes[range.lowerBound + 4] ^= 0x01
      try bytes.write(to: url)

      let store = try SQLiteOutboxStore(url: url)
      memory["damaged-param"] = 1
      let states = LoadingStateRecorder(flowable("damaged-param").publish())
      await states.waitForState { $0.content == 1 }
      let outbox = try await Outbox.open(store, clock: clock, options: Self.options)
      #expect(await outbox.damaged.map(\.channel) == ["counts"])
      #expect(outbox.statistics.quarantined == 1)
      #expect(outbox.statistics.pending == 2, "the two intact entries wait for their channel")
      _ = try await repository.writes(
        through: mutator, outbox: outbox, channel: "counts", paramCodec: .automatic, changeCodec: .automatic)
      // Its param is refetched: what the damaged change did is unknown.
      await fetcher.waitForCall(0)
      fetcher.succeed(0, with: 2)
      await states.waitForState { $0 == completed(2) }
      await mutator.waitForSend(1)
      #expect(Set(mutator.sends.map(\.param)) == ["a", "b"])
      #expect(try await store.quarantined().count == 1)
      await states.stop()
      await outbox.close()
      await store.close()
    }
  }

  @Test("an entry its channel can no longer decode is quarantined at attach; the others are sent")
  func undecodableEntry() async throws {
    let store = MemoryOutboxStore()
    let outbox = try await Outbox.open(store, clock: clock, options: Self.options)
    _ = try await store.append(
      OutboxRecord(channel: "counts", scope: Data("a".utf8), param: Data("a".utf8), change: Data("not json".utf8)))
    _ = try await store.append(
      OutboxRecord(channel: "counts", scope: Data("b".utf8), param: Data("b".utf8), change: Data("4".utf8)))
    await outbox.close()
    let (reopened, _) = try await self.writes(store: store)
    await mutator.waitForSend(0)
    #expect(mutator.sends.map(\.param) == ["b"])
    #expect(await reopened.damaged.count == 1)
    #expect(try await store.quarantined().count == 1)
    await reopened.close()
  }

  @Test("one channel attaches once; a closed outbox refuses changes and shows nothing")
  func channelsAndClosing() async throws {
    let (outbox, writes) = try await self.writes()
    await #expect(throws: OutboxError.self) {
      _ = try await repository.writes(
        through: mutator, outbox: outbox, channel: "counts", paramCodec: .automatic, changeCodec: .automatic)
    }
    await outbox.close()
    let thrown = await #expect(throws: OutboxError.self) { try await writes.mutate("a", 1) }
    guard case .closed = thrown else {
      Issue.record("expected closed, got \(String(describing: thrown))")
      return
    }
    #expect(repository.params.isEmpty)
  }

  @Test("an encoding failure is a typed error and records nothing")
  func encodingFailure() async throws {
    let outbox = try await Outbox.open(MemoryOutboxStore(), clock: clock, options: Self.options)
    let failing = StoreCodec<Int>(encode: { _ in throw TestError("cannot encode") }, decode: { _ in 0 })
    let writes = try await repository.writes(
      through: mutator, outbox: outbox, channel: "counts", paramCodec: .automatic, changeCodec: failing)
    let thrown = await #expect(throws: OutboxError.self) { try await writes.mutate("a", 1) }
    guard case .encodingFailed = thrown else {
      Issue.record("expected encodingFailed, got \(String(describing: thrown))")
      return
    }
    #expect(try await outbox.store.loadAll().isEmpty)
    await outbox.close()
  }
}

/// Polls `condition` (on the continuous clock) until it holds, for 10 seconds at most.
func waitUntil(
  _ condition: @Sendable () async -> Bool, sourceLocation: SourceLocation = #_sourceLocation
) async throws {
  let deadline = ContinuousClock.now.advanced(by: .seconds(10))
  while !(await condition()) {
    guard ContinuousClock.now < deadline else {
      Issue.record("the condition did not hold within 10 s", sourceLocation: sourceLocation)
      throw TestError("timed out")
    }
    try await Task.sleep(for: .milliseconds(1))
  }
}

/// Thousands of changes from many tasks, with refreshes and subscribers, against an origin
/// that applies them at once.
@Suite(.timeLimit(.minutes(2)))
struct WritesStressTests {
  /// An origin that applies every change it is sent (a change sets the value) and remembers
  /// the order of the keys per param.
  final class Origin: Mutator, Sendable {
    let state = KilnMutex<(values: [String: Int], keys: [String: [IdempotencyKey]])>(([:], [:]))
    /// The sends in flight now, the most ever in flight at once, and the params in flight.
    let flight = KilnMutex<(now: Int, most: Int, params: Set<String>, overlaps: Int)>((0, 0, [], 0))

    func apply(_ change: Int, to content: Int?) -> Int? { change }

    func send(_ change: Int, param: String, key: IdempotencyKey) async throws(MutationSendError) -> Int? {
      flight.withLock { flight in
        flight.now += 1
        flight.most = max(flight.most, flight.now)
        if !flight.params.insert(param).inserted { flight.overlaps += 1 }
      }
      await Task.yield()
      state.withLock { state in
        state.values[param] = change
        state.keys[param, default: []].append(key)
      }
      flight.withLock { flight in
        flight.now -= 1
        flight.params.remove(param)
      }
      return nil
    }

    func value(_ param: String) -> Int? { state.withLock { $0.values[param] } }
  }

  @Test(
    "2,000 concurrent changes over 20 params: each applied once, in order per param, one at a time per param, at most 8 at once, and shown at the end"
  )
  func concurrentChanges() async throws {
    let origin = Origin()
    let repository = Repository<String, Int>()
    let fetcher = CountingFetcher<Int> { origin.value($0) ?? 0 }
    let outbox = try await Outbox.open(MemoryOutboxStore(), options: OutboxOptions(maxConcurrentSends: 8))
    let writes = try await repository.writes(
      through: origin, outbox: outbox, channel: "values", paramCodec: .automatic, changeCodec: .automatic)
    let params = (0..<20).map { "p\($0)" }
    let subscribers = params.map { param in
      LoadingStateRecorder(AnyStoreFlowable.from(cacher: repository, fetcher: fetcher, param: param).publish())
    }
    let tickets = await withTaskGroup(of: (String, MutationTicket?).self) { group in
      for index in 0..<2_000 {
        let param = params[index % params.count]
        group.addTask {
          if index % 100 == 0 {
            await AnyStoreFlowable.from(cacher: repository, fetcher: fetcher, param: param).refresh()
          }
          return (param, try? await writes.mutate(param, index))
        }
      }
      var all: [(String, MutationTicket?)] = []
      for await ticket in group { all.append(ticket) }
      return all
    }
    #expect(tickets.allSatisfy { $0.1 != nil }, "every change was recorded")
    try await waitUntil { await outbox.entries.isEmpty }
    for param in params {
      let sent = tickets.filter { $0.0 == param }.compactMap(\.1).sorted { $0.sequence < $1.sequence }
      let applied = origin.state.withLock { $0.keys[param] ?? [] }
      #expect(applied == sent.map(\.key), "\(param): each change applied once, in the order shown")
    }
    // Attempts hand over to each other's tasks: the bound and one-at-a-time per param still hold.
    let flight = origin.flight.withLock { $0 }
    #expect(flight.most <= 8 && flight.most > 1, "at most maxConcurrentSends at once: \(flight.most)")
    #expect(flight.overlaps == 0, "two changes of one param were sent at once")
    // Every param shows the origin's last value, with nothing pending.
    for (param, subscriber) in zip(params, subscribers) {
      let last = origin.value(param)
      await subscriber.waitForSnapshot { $0.state.content == last && $0.pending == nil && !$0.state.isLoading }
      await subscriber.stop()
    }
    await outbox.close()
  }
}
