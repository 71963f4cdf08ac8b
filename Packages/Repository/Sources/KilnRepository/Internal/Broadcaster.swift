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

  @usableFromInline
  struct State {
    @usableFromInline var current: Snapshot?
    @usableFromInline var subscribers: [UInt64: (inbox: SubscriberInbox<Data>, tag: Tag)] = [:]
    @usableFromInline var nextID: UInt64 = 0
    @usableFromInline var onEmpty: (@Sendable () -> Void)?
  }

  @usableFromInline let state = KilnMutex(State())

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
      state.subscribers[id] = (inbox, tag)
      return inbox
    }
  }

  @inlinable
  func remove(_ id: UInt64) {
    // The removed tag is released after the lock: what it captures may run a deinit.
    let (removed, onEmpty) = state.withLock { state in
      let removed = state.subscribers.removeValue(forKey: id)
      return (removed, removed != nil && state.subscribers.isEmpty ? state.onEmpty : nil)
    }
    onEmpty?()
    _ = removed
  }

  /// The number of subscribers.
  var subscriberCount: Int {
    state.withLock { $0.subscribers.count }
  }

  /// The tag of the newest subscriber, or `nil` without one.
  var latestTag: Tag? {
    state.withLock { state in state.subscribers.max { $0.key < $1.key }?.value.tag }
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
    // section gets it as its replay and is not in `subscribers`; emits never overlap.
    let subscribers = state.withLock { state in
      // Stored unflagged: it is the replay of new subscribers, whose first state it is.
      state.current = snapshot
      state.current?.stateUnchanged = false
      // Iterated, not mapped over `values`: this code is not specialised, and there reading
      // each value through `Dictionary.Values`' subscript allocates a coroutine frame (two
      // allocations per subscriber, measured by probing malloc in RepositoryBenchmarks).
      var inboxes: [SubscriberInbox<Data>] = []
      inboxes.reserveCapacity(state.subscribers.count)
      for (_, subscriber) in state.subscribers { inboxes.append(subscriber.inbox) }
      return inboxes
    }
    for inbox in subscribers { inbox.yield(snapshot) }
    return true
  }
}
