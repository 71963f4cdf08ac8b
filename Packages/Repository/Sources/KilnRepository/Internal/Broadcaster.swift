public import _KilnSynchronization

/// Fans the snapshots of one param out to its subscribers: replays the current snapshot to
/// each new subscriber, then yields every change, in one order for everyone. Each subscriber
/// comes with a `Tag` (the coordinator's: the fetch of the flowable it subscribed through),
/// kept while it stays and dropped when it leaves.
///
/// Only the param's ``FlowCoordinator`` emits (one at a time, from the actor), so comparing
/// a new state with the current one happens outside the lock. Registering a subscriber (with
/// its replay) and swapping the current snapshot happen under it, so nobody misses or repeats
/// a change; yielding to the subscribers happens after it, never under it (see ``emit(_:)``).
///
/// `subscribe()` and `remove(_:)` are inlinable so that a subscription made from specialised
/// code (see ``FlowRegistry/subscribe(_:cacher:)``) is specialised too; library evolution is
/// off, so this is no public API.
@usableFromInline
final class Broadcaster<Data: Sendable, Tag: Sendable>: Sendable {
  @usableFromInline typealias Snapshot = LoadingSnapshot<Data>
  @usableFromInline typealias Inboxes = ContiguousArray<SubscriberInbox<Data>>

  @usableFromInline
  struct State {
    @usableFromInline var current: Snapshot?
    /// The subscribers' inboxes, what ``emit(_:)`` delivers to: handed to it whole (one
    /// retain of the buffer, not one per subscriber), and copied only when a subscriber comes
    /// or goes while an emit still delivers from it.
    @usableFromInline var inboxes: Inboxes = []
    /// The subscriber at each index of ``inboxes``: its id and its tag.
    @usableFromInline var entries: ContiguousArray<(id: UInt64, tag: Tag)> = []
    /// The index in ``inboxes`` of each subscriber, by id.
    @usableFromInline var indices: [UInt64: Int] = [:]
    @usableFromInline var nextID: UInt64 = 0
    @usableFromInline var onEmpty: (@Sendable () -> Void)?
    /// Yields a snapshot to every inbox: the function made by the newest ``subscribe(tag:)``
    /// (see ``Broadcaster/deliverer``); `nil` before the first subscriber, when an emit has
    /// nobody to deliver to.
    @usableFromInline var deliver: (@Sendable (Inboxes, Snapshot) -> Void)?

    @inlinable init() {}
  }

  @usableFromInline let state = KilnMutex(State())

  @inlinable
  init() {}

  /// The loop that yields a snapshot to every inbox, as a function made where this is
  /// called. Each ``subscribe(tag:)`` (inlinable, reached from the specialised
  /// ``FlowRegistry/subscribe(_:source:fetch:)``) installs it, so it is specialised for `Data`
  /// whenever anyone subscribed, while ``emit(_:)``, called by the unspecialised coordinator,
  /// is not. It was made once in ``init()``, where a broadcaster made by a param's first
  /// `update`, `refresh` or `mutate` (through the unspecialised `FlowRegistry.lease`) got the
  /// generic loop for good: each yield then looked up the metadata of the inbox's generic
  /// types, 27% of a refresh to 1,000 subscribers (perf, RepositoryBenchmarks). Specialised,
  /// it captures nothing, so installing it allocates nothing.
  @inlinable
  static var deliverer: @Sendable (Inboxes, Snapshot) -> Void {
    { inboxes, snapshot in
      for inbox in inboxes { inbox.yield(snapshot) }
    }
  }

  /// Calls `body` (outside the lock) each time the last subscriber leaves.
  func onEmpty(_ body: @escaping @Sendable () -> Void) {
    state.withLock { $0.onEmpty = body }
  }

  /// A new subscription: the current snapshot (if any), then every change. Ends (and
  /// unsubscribes, dropping `tag`) when the reading task is cancelled or the inbox is finished.
  @inlinable
  func subscribe(tag: Tag) -> SubscriberInbox<Data> {
    // One critical section: the replay goes into the inbox before anyone can read it.
    state.withLock { state in
      let id = state.nextID
      state.nextID += 1
      // Strong: the cycle it makes (self → inbox → onFinish → self) ends when the inbox
      // finishes, which drops `onFinish`.
      let inbox = SubscriberInbox(replay: state.current, onFinish: { self.remove(id) })
      state.deliver = Self.deliverer
      state.indices[id] = state.inboxes.count
      state.inboxes.append(inbox)
      state.entries.append((id, tag))
      return inbox
    }
  }

  @inlinable
  func remove(_ id: UInt64) {
    // The removed inbox and tag are released after the lock: what the tag captures may run
    // a deinit.
    let (removed, onEmpty) = state.withLock { state -> ((SubscriberInbox<Data>, Tag)?, (@Sendable () -> Void)?) in
      guard let index = state.indices.removeValue(forKey: id) else { return (nil, nil) }
      // The last subscriber takes the removed one's place.
      let last = state.inboxes.count - 1
      if index != last {
        state.inboxes.swapAt(index, last)
        state.entries.swapAt(index, last)
        state.indices[state.entries[index].id] = index
      }
      let inbox = state.inboxes.removeLast()
      let entry = state.entries.removeLast()
      return ((inbox, entry.tag), state.inboxes.isEmpty ? state.onEmpty : nil)
    }
    onEmpty?()
    _ = removed
  }

  /// The number of subscribers.
  var subscriberCount: Int {
    state.withLock { $0.inboxes.count }
  }

  /// The tag of the newest subscriber, or `nil` without one.
  var latestTag: Tag? {
    state.withLock { state in state.entries.max { $0.id < $1.id }?.tag }
  }

  /// The last emitted snapshot.
  var current: Snapshot? {
    state.withLock { $0.current }
  }

  /// Emits `snapshot` to every subscriber unless its state equals the current one (then
  /// only the origin is updated). A snapshot whose state is the same but whose pending
  /// changes differ is emitted flagged ``LoadingSnapshot/stateUnchanged``, for the
  /// subscribers of snapshots (plain state sequences skip it). Call from one task at a time.
  ///
  /// - Returns: Whether the snapshot was emitted.
  @discardableResult
  func emit(_ snapshot: Snapshot) -> Bool {
    let current = state.withLock { $0.current }
    var snapshot = snapshot
    if let current, current.state.isSame(as: snapshot.state) == true {
      guard current.pending != snapshot.pending else {
        state.withLock { $0.current?.origin = snapshot.origin }
        return false
      }
      snapshot.stateUnchanged = true
    }
    // Yield outside the lock: yielding resumes a subscriber's task, which takes that task's
    // status lock, while cancelling a subscriber's task takes its status lock first and then
    // ours (its cancellation handler → SubscriberInbox.finish() → remove). Yielding under the lock deadlocked the two threads.
    // Nobody misses or repeats this snapshot: a subscriber registered after this critical
    // section gets it as its replay and is not in `inboxes`; emits never overlap.
    let (inboxes, deliver) = state.withLock { state in
      // Stored unflagged: it is the replay of new subscribers, whose first state it is.
      state.current = snapshot
      state.current?.stateUnchanged = false
      return (state.inboxes, state.deliver)
    }
    deliver?(inboxes, snapshot)
    return true
  }
}
