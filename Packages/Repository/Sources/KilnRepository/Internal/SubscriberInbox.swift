public import _KilnSynchronization

/// The snapshots one subscriber has not read yet, and its task while it waits for one: what
/// the ``Broadcaster`` delivers to, in place of an `AsyncStream` per subscriber.
///
/// Bounded, newest wins: a subscriber that falls more than ``capacity`` snapshots behind
/// loses the oldest it has not read, so a subscriber that stops reading holds at most that
/// many and never slows the others (a delivery is a resumption or an append, in constant
/// time). One that keeps up gets every snapshot, in order.
///
/// One object and one lock per subscriber, specialised with the rest of a subscription where
/// it is made. An `AsyncStream` costs three objects and a growable buffer per subscriber, and
/// runs the standard library's unspecialised generic code on every yield and `next()` (about
/// a third of a first emission's time went to looking up type metadata there, profiled in
/// RepositoryBenchmarks).
///
/// It ends when the subscriber's task is cancelled while it reads (``next()`` then returns
/// `nil`, dropping what was buffered, as an `AsyncStream` does), or when ``finish()`` is
/// called (by the owner of the iterator, when it is dropped). Either way it calls its
/// `onFinish` once, outside its lock (the broadcaster then forgets the subscriber).
@usableFromInline
final class SubscriberInbox<Data: Sendable>: Sendable {
  @usableFromInline typealias Snapshot = LoadingSnapshot<Data>

  /// The most snapshots kept unread.
  static var capacity: Int { State.capacity }

  @usableFromInline
  struct State {
    /// The most snapshots kept unread; also how many read or dropped slots the buffer keeps
    /// before it reclaims them, so that it never holds more than twice as many snapshots.
    @usableFromInline static var capacity: Int { 64 }

    /// Snapshots not read yet, from `head` on; those before `head` were read or dropped.
    @usableFromInline var buffer: [Snapshot] = []
    @usableFromInline var head = 0
    /// The subscriber's task, suspended in ``next()`` with the buffer empty.
    @usableFromInline var waiter: UnsafeContinuation<Snapshot?, Never>?
    /// Called once, when the inbox finishes; `nil` after.
    @usableFromInline var onFinish: (@Sendable () -> Void)?
    @usableFromInline var isFinished = false

    @inlinable
    init(replay: Snapshot?, onFinish: @escaping @Sendable () -> Void) {
      if let replay { buffer = [replay] }
      self.onFinish = onFinish
    }

    /// Appends `snapshot`, dropping the oldest unread one when ``capacity`` are unread
    /// already.
    @inlinable
    mutating func append(_ snapshot: Snapshot) {
      if buffer.count - head >= Self.capacity {
        head += 1
        reclaim()
      }
      buffer.append(snapshot)
    }

    /// Drops the read and dropped slots once they are ``capacity`` many: a subscriber that
    /// reads one behind forever would otherwise keep every snapshot it read.
    @inlinable
    mutating func reclaim() {
      if head >= Self.capacity {
        buffer.removeFirst(head)
        head = 0
      }
    }

    /// The oldest snapshot not read, removed.
    @inlinable
    mutating func popFirst() -> Snapshot? {
      guard head < buffer.count else { return nil }
      let first = buffer[head]
      head += 1
      if head == buffer.count {
        buffer.removeAll(keepingCapacity: true)
        head = 0
      } else {
        reclaim()
      }
      return first
    }
  }

  @usableFromInline let state: KilnMutex<State>

  /// The number of slots the buffer holds now, read, dropped or unread (for tests).
  var slotCount: Int {
    state.withLock { $0.buffer.count }
  }

  /// An inbox holding `replay` (the current snapshot) first.
  @inlinable
  init(replay: Snapshot?, onFinish: @escaping @Sendable () -> Void) {
    state = KilnMutex(State(replay: replay, onFinish: onFinish))
  }

  /// Delivers `snapshot`: resumes the subscriber if it waits, buffers it otherwise; does
  /// nothing once finished. Inlinable, so that it specialises in ``Broadcaster/deliver``.
  @inlinable
  func yield(_ snapshot: Snapshot) {
    let waiter = state.withLock { state -> UnsafeContinuation<Snapshot?, Never>? in
      guard !state.isFinished else { return nil }
      if let waiter = state.waiter {
        state.waiter = nil
        return waiter
      }
      state.append(snapshot)
      return nil
    }
    waiter?.resume(returning: snapshot)
  }

  /// Ends the inbox: a waiting subscriber gets `nil`, the buffer is dropped, and `onFinish`
  /// is called (once, whoever finishes first).
  @usableFromInline
  func finish() {
    let (waiter, onFinish) = state.withLock { state in
      state.isFinished = true
      state.buffer = []
      state.head = 0
      defer {
        state.waiter = nil
        state.onFinish = nil
      }
      return (state.waiter, state.onFinish)
    }
    waiter?.resume(returning: nil)
    onFinish?()
  }

  /// The next snapshot, waiting for one if none is buffered; `nil` once finished or once the
  /// calling task is cancelled (which finishes the inbox). Called by one task at a time.
  ///
  /// Inlinable, so that it specialises where the subscription is iterated (see
  /// ``LoadingStateSequence/AsyncIterator/next()``).
  @inlinable
  nonisolated(nonsending) func next() async -> Snapshot? {
    // A snapshot already buffered (the replay, usually), or the end: no continuation. The
    // outer optional says whether there was an answer, the inner is the answer.
    let read = state.withLock { state -> Snapshot?? in
      if let first = state.popFirst() { return .some(first) }
      return state.isFinished ? .some(nil) : nil
    }
    if let read {
      // A cancelled task gets the end, not what was buffered. Checked only here: with
      // nothing buffered, the handler below finishes the inbox at once for a task cancelled
      // already, and the wait then sees the end (a refresh reaching many subscribers finds
      // them all waiting, and reading the task's status costs a cache miss each).
      if case .some = read, Task.isCancelled {
        finish()
        return nil
      }
      return read
    }
    return await withTaskCancellationHandler(
      operation: {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Snapshot?, Never>) in
          // Under the lock with `yield` and `finish`: a snapshot or an end arriving since the
          // check above is seen here, or it sees the waiter.
          let now = state.withLock { state -> Snapshot?? in
            if let first = state.popFirst() { return .some(first) }
            if state.isFinished { return .some(nil) }
            state.waiter = continuation
            return nil
          }
          if let now { continuation.resume(returning: now) }
        }
      },
      onCancel: { finish() },
      isolation: #isolation)
  }
}
