import Foundation

/// The write side of a ``Repository``: changes shown at once, kept in an ``Outbox`` until the
/// origin confirms them. Made by ``Repository/writes(through:outbox:channel:paramCodec:changeCodec:scope:)``.
///
/// ```swift
/// try await titles.mutate(noteID, "Groceries")
/// for await snapshot in note.publish().withOrigin() {
///   render(snapshot.state)                         // shows "Groceries" at once
///   pendingBadge.isHidden = snapshot.pending == nil // until the origin confirms it
/// }
/// ```
///
/// How the content behaves while changes are pending:
/// - every subscriber of the param sees the change at once, with ``LoadingSnapshot/pending``
///   saying how many changes are unconfirmed and how sending them goes; the state stays
///   `.completed` (or `.loading`) — a failed send is never an `.error`;
/// - a refresh shows the origin's content *with* the pending changes on top: it never hides
///   one, even when the origin's answer predates it;
/// - once the origin confirms a change it joins the cached content, and after the last one
///   the param is validated once (refetched when observed), unless the origin sent its
///   content with the confirmation;
/// - a rejected change disappears and the param is refetched: the content goes back to the
///   origin's truth, with the other pending changes on top;
/// - a param with pending changes is not released (``Repository/releaseDelay``), and the
///   changes come back as pending after a restart, when the channel attaches again.
public struct Writes<Param: Hashable & Sendable, Data: Sendable, Change: Sendable>: Sendable {
  /// The outbox the changes go through.
  public let outbox: Outbox
  /// The name of this repository's changes in the outbox.
  public let channel: String
  let repository: Repository<Param, Data>
  let paramCodec: StoreCodec<Param>
  let changeCodec: StoreCodec<Change>
  let scope: @Sendable (Param) -> String?
  let apply: @Sendable (Change, Data?) -> Data?
  /// Whether a change may be written over the param's newest waiting change.
  public let coalescing: WriteCoalescing

  /// Makes `change` to the content of `param`: records it durably in the outbox, shows it
  /// to every subscriber of `param` as pending, and returns. It is sent when its turn comes
  /// (after the earlier changes of its scope), not before this returns.
  ///
  /// With ``WriteCoalescing/lastWriteWins``, a change to a param whose newest change still
  /// waits its turn (unsent, queued behind another) takes that change's place in the outbox
  /// and on screen, under a new idempotency key; the ticket then names that entry.
  ///
  /// - Returns: The change's ticket: its place in the outbox and its idempotency key.
  /// - Throws: ``OutboxError/storageFull``, ``OutboxError/recordTooLarge(size:limit:)``,
  ///   ``OutboxError/encodingFailed(_:)``, ``OutboxError/closed`` or ``OutboxError/store(_:)``.
  ///   When it throws, nothing was recorded and nothing is shown.
  @discardableResult
  public func mutate(_ param: Param, _ change: Change) async throws(OutboxError) -> MutationTicket {
    let paramBytes: Foundation.Data
    let changeBytes: Foundation.Data
    do {
      paramBytes = try paramCodec.encode(param)
      changeBytes = try changeCodec.encode(change)
    } catch {
      throw .encodingFailed(error)
    }
    let key = IdempotencyKey()
    let record = OutboxRecord(
      channel: channel, scope: scope(param).map { Foundation.Data($0.utf8) } ?? paramBytes, param: paramBytes,
      change: changeBytes, idempotencyKey: key, enqueuedAt: outbox.date())
    let apply = self.apply
    if coalescing == .lastWriteWins, let sequence = try await outbox.coalesce(record) {
      // Recorded over the waiting change, which is not sent until the new one shows.
      let coordinator = repository.flows.lease(param, source: repository.source)
      await coordinator.replaceMutation(sequence) { apply(change, $0) }
      await coordinator.endLease()
      await outbox.releaseCoalesced(sequence)
      return MutationTicket(sequence: sequence, key: key)
    }
    // Recorded first: a full disk throws here, before anything shows.
    let sequence = try await outbox.append(record)
    let coordinator = repository.flows.lease(param, source: repository.source)
    await coordinator.applyMutationEndingLease(sequence, enqueuedAt: record.enqueuedAt) { apply(change, $0) }
    // Sent only now: no answer can overtake the change being shown.
    await outbox.ready(sequence)
    return MutationTicket(sequence: sequence, key: key)
  }
}

/// Whether a change may replace the param's newest change still waiting in the outbox.
public enum WriteCoalescing: Hashable, Sendable {
  /// Every change is sent (the default): for changes that add up, such as increments or
  /// appends.
  case never
  /// A change replaces the param's newest change while that one still waits its turn (it was
  /// made in this run, is shown, and has never been attempted): for changes that set the
  /// content, where only the last one matters, such as a title edited keystroke by keystroke.
  /// A change already being sent, sent before, or restored after a restart is never replaced.
  case lastWriteWins
}

/// A change recorded by ``Writes/mutate(_:_:)``: where it is in the outbox, and the key the
/// origin sees on every attempt at it.
public struct MutationTicket: Hashable, Sendable {
  /// Its sequence number in the outbox (as ``OutboxEvent`` and ``Outbox/entries`` report it).
  public let sequence: UInt64
  /// The `Idempotency-Key` sent with it.
  public let key: IdempotencyKey
}

extension Repository {
  /// Attaches writes through `mutator` on `channel` of `outbox`. The channel's changes still
  /// in the outbox (from before a restart) show again as pending, then are sent; entries of
  /// the channel that were damaged on disk are refetched.
  ///
  /// - Parameters:
  ///   - mutator: How a change applies locally and is sent.
  ///   - outbox: Where the changes wait for the origin.
  ///   - channel: This repository's name in the outbox (at most 255 bytes of UTF-8); the
  ///     same across launches, since the entries are found by it.
  ///   - paramCodec: How a param is stored.
  ///   - changeCodec: How a change is stored. An entry it can no longer decode is quarantined.
  ///   - scope: The ordering key of a param's changes: changes of one scope are sent one at
  ///     a time, in order. `nil` (the default) for the param itself.
  /// - Throws: ``OutboxError/channelInUse(_:)`` when the channel is attached already, or
  ///   ``OutboxError/closed``.
  public func writes<M: Mutator>(
    through mutator: M,
    outbox: Outbox,
    channel: String,
    paramCodec: StoreCodec<Param>,
    changeCodec: StoreCodec<M.Change>,
    scope: @escaping @Sendable (Param) -> String? = { _ in nil }
  ) async throws(OutboxError) -> Writes<Param, Data, M.Change> where M.Param == Param, M.Data == Data {
    try await writes(
      through: mutator, outbox: outbox, channel: channel, paramCodec: paramCodec, changeCodec: changeCodec,
      scope: scope, coalescing: .never)
  }

  /// Attaches writes through `mutator` on `channel` of `outbox`, saying whether consecutive
  /// changes of a param may replace one another while they wait.
  ///
  /// ```swift
  /// let titles = try await notes.writes(
  ///   through: NoteTitle(handler: handler), outbox: outbox, channel: "note-title",
  ///   paramCodec: .automatic, changeCodec: .automatic, coalescing: .lastWriteWins)
  /// ```
  ///
  /// - Parameters:
  ///   - mutator: How a change applies locally and is sent.
  ///   - outbox: Where the changes wait for the origin.
  ///   - channel: This repository's name in the outbox.
  ///   - paramCodec: How a param is stored.
  ///   - changeCodec: How a change is stored.
  ///   - scope: The ordering key of a param's changes; `nil` for the param itself.
  ///   - coalescing: ``WriteCoalescing/lastWriteWins`` to let a change replace the param's
  ///     newest waiting change; ``WriteCoalescing/never`` to send every change.
  /// - Throws: ``OutboxError/channelInUse(_:)`` or ``OutboxError/closed``.
  public func writes<M: Mutator>(
    through mutator: M,
    outbox: Outbox,
    channel: String,
    paramCodec: StoreCodec<Param>,
    changeCodec: StoreCodec<M.Change>,
    scope: @escaping @Sendable (Param) -> String? = { _ in nil },
    coalescing: WriteCoalescing
  ) async throws(OutboxError) -> Writes<Param, Data, M.Change> where M.Param == Param, M.Data == Data {
    let side = Outbox.Channel(
      attempt: { [self] entry, _ in
        await self.attempt(
          entry, mutator: mutator, store: outbox.store, paramCodec: paramCodec, changeCodec: changeCodec)
      },
      failed: { [self] sequence, param, attempts, error in
        guard let param = try? paramCodec.decode(param) else { return }
        let coordinator = flows.lease(param, source: source)
        await coordinator.mutationProgress(sequence, isSending: false, attempts: attempts, failure: error)
        await coordinator.endLease()
      })
    let (restored, damaged) = try await outbox.attach(channel, side)
    var shown: [OutboxEntry] = []
    for entry in restored {
      let param: Param
      let change: M.Change
      do {
        param = try paramCodec.decode(entry.record.param)
        change = try changeCodec.decode(entry.record.change)
      } catch {
        await outbox.quarantine(entry.sequence, reason: "the channel cannot decode it: \(error)")
        continue
      }
      let coordinator = flows.lease(param, source: source)
      await coordinator.applyMutationEndingLease(entry.sequence, enqueuedAt: entry.record.enqueuedAt) {
        mutator.apply(change, to: $0)
      }
      shown.append(entry)
    }
    await outbox.release(shown)
    // What a damaged entry changed is unknown: the origin's content replaces the guess.
    let lost = damaged.compactMap { $0.param.flatMap { try? paramCodec.decode($0) } }
    if !lost.isEmpty { await invalidate(where: { lost.contains($0) }) }
    return Writes(
      outbox: outbox, channel: channel, repository: self, paramCodec: paramCodec, changeCodec: changeCodec,
      scope: scope, apply: { mutator.apply($0, to: $1) }, coalescing: coalescing)
  }

  /// One attempt at `entry` through `mutator`, with the state of its param updated around it.
  private func attempt<M: Mutator>(
    _ entry: OutboxEntry, mutator: M, store: any OutboxStore, paramCodec: StoreCodec<Param>,
    changeCodec: StoreCodec<M.Change>
  ) async -> Outbox.AttemptResult where M.Param == Param, M.Data == Data {
    let param: Param
    let change: M.Change
    do {
      param = try paramCodec.decode(entry.record.param)
      change = try changeCodec.decode(entry.record.change)
    } catch {
      return .unreadable("the channel cannot decode it: \(error)")
    }
    let sequence = entry.sequence
    let coordinator = flows.lease(param, source: source)
    await coordinator.mutationProgress(sequence, isSending: true, attempts: entry.attempts, failure: nil)
    let server: Data?
    do {
      server = try await mutator.send(change, param: param, key: entry.record.idempotencyKey)
    } catch {
      let result = await failed(
        error, entry: entry, param: param, change: change, mutator: mutator, coordinator: coordinator, store: store,
        changeCodec: changeCodec)
      await coordinator.endLease()
      return result
    }
    await coordinator.confirmMutationEndingLease(sequence, server: server)
    return .confirmed
  }

  private func failed<M: Mutator>(
    _ error: MutationSendError, entry: OutboxEntry, param: Param, change: M.Change, mutator: M,
    coordinator: FlowCoordinator<Param, Data>, store: any OutboxStore, changeCodec: StoreCodec<M.Change>
  ) async -> Outbox.AttemptResult where M.Param == Param, M.Data == Data {
    switch error {
    case .transient, .outstanding:
      return .retryable(error)
    case .unreachable:
      return .unreachable(error)
    case .rejected(let status, let body):
      let rejection = MutationRejection(param: param, change: change, status: status, body: body)
      if let replacement = await mutator.resolve(rejection) {
        do {
          var record = entry.record
          record.change = try changeCodec.encode(replacement)
          // A new key: the origin refused the old one's payload, and would refuse a new payload under it.
          record.idempotencyKey = IdempotencyKey()
          try await store.replace(entry.sequence, with: record)
          await coordinator.replaceMutation(entry.sequence) { mutator.apply(replacement, to: $0) }
          return .replaced(record)
        } catch {
          // Not recorded: the rejected change stays as it was and is dropped below.
        }
      }
      await coordinator.rejectMutation(entry.sequence)
      return .rejected(status: status, body: body, error: rejection)
    }
  }
}
