/// An asynchronous sequence of loading states: the current state first, then every change.
///
/// ```swift
/// for await state in flowable.publish() {
///   render(state)
/// }
/// ```
///
/// The sequence ends when the task iterating it is cancelled. Each iteration is its own
/// subscription: iterating twice subscribes twice.
///
/// A subscriber that keeps up gets every change, in order. One that falls more than 64 changes
/// behind (it stopped reading, or reads slowly) skips the oldest it has not read: newest
/// wins, so a slow subscriber holds at most 64 states and never slows the others.
public struct LoadingStateSequence<Content: Sendable>: AsyncSequence, Sendable {
  public typealias Element = LoadingState<Content>
  public typealias Failure = Never

  /// The same subscriptions, with the origin of each state.
  public let snapshots: LoadingSnapshotSequence<Content>

  /// Wraps a sequence of snapshots.
  public init(_ snapshots: LoadingSnapshotSequence<Content>) {
    self.snapshots = snapshots
  }

  /// Wraps any sequence of states (whose origin is unknown).
  ///
  /// - Parameter states: The states to emit.
  public init<States: AsyncSequence & Sendable>(_ states: States)
  where States.Element == LoadingState<Content>, States.Failure == Never {
    snapshots = LoadingSnapshotSequence {
      var iterator = states.makeAsyncIterator()
      return SnapshotSource {
        await iterator.next(isolation: nil).map { LoadingSnapshot(state: $0, origin: nil) }
      }
    }
  }

  /// The states with the origin of their content.
  ///
  /// - Returns: A sequence of ``LoadingSnapshot``.
  public func withOrigin() -> LoadingSnapshotSequence<Content> { snapshots }

  /// Transforms the content of every state.
  ///
  /// ```swift
  /// let titles: LoadingStateSequence<[String]> = articles.publish().mapContent { $0.map(\.title) }
  /// ```
  ///
  /// - Parameter transform: Maps a content.
  /// - Returns: A sequence of the transformed states.
  public func mapContent<NewContent: Sendable>(
    _ transform: @escaping @Sendable (Content) -> NewContent
  ) -> LoadingStateSequence<NewContent> {
    let snapshots = self.snapshots
    return LoadingStateSequence<NewContent>(
      LoadingSnapshotSequence {
        let source = snapshots.makeSource()
        return SnapshotSource {
          guard let snapshot = await source.next() else { return nil }
          var mapped = LoadingSnapshot(
            state: snapshot.state.mapContent(transform), origin: snapshot.origin, pending: snapshot.pending)
          mapped.stateUnchanged = snapshot.stateUnchanged
          return mapped
        }
      })
  }

  /// An iterator over the states.
  public struct AsyncIterator: AsyncIteratorProtocol {
    @usableFromInline let source: SnapshotSource<Content>

    @usableFromInline
    init(source: SnapshotSource<Content>) {
      self.source = source
    }

    /// The next state, or `nil` once the task is cancelled.
    ///
    /// Inlinable, with the source and the inbox under it, so that the receive path is
    /// specialised for `Content` in the subscriber's module (unspecialised, a sixth of a
    /// refresh delivered to many subscribers went to looking up type metadata).
    @inlinable
    public mutating func next() async -> LoadingState<Content>? {
      await next(isolation: nil)
    }

    /// The next state, or `nil` once the task is cancelled, received on the caller's
    /// isolation (what `for await` calls).
    ///
    /// Without it, `for await` would go through the standard library's generic
    /// `next(isolation:)`, which is not specialised and hops to the generic executor and back
    /// on every element.
    @inlinable
    public mutating func next(isolation actor: isolated (any Actor)?) async -> LoadingState<Content>? {
      // A snapshot in which only the pending changes moved repeats the state: skipped here.
      while let snapshot = await source.next() {
        if !snapshot.stateUnchanged { return snapshot.state }
      }
      return nil
    }
  }

  /// Subscribes.
  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(source: snapshots.makeSource())
  }
}

/// An asynchronous sequence of ``LoadingSnapshot``: states with the origin of their content.
public struct LoadingSnapshotSequence<Content: Sendable>: AsyncSequence, Sendable {
  public typealias Element = LoadingSnapshot<Content>
  public typealias Failure = Never

  let makeSource: @Sendable () -> SnapshotSource<Content>

  @usableFromInline
  init(_ makeSource: @escaping @Sendable () -> SnapshotSource<Content>) {
    self.makeSource = makeSource
  }

  /// An iterator over the snapshots.
  public struct AsyncIterator: AsyncIteratorProtocol {
    @usableFromInline let source: SnapshotSource<Content>

    @usableFromInline
    init(source: SnapshotSource<Content>) {
      self.source = source
    }

    /// The next snapshot, or `nil` once the task is cancelled.
    @inlinable
    public mutating func next() async -> LoadingSnapshot<Content>? {
      await source.next()
    }

    /// The next snapshot, or `nil` once the task is cancelled, received on the caller's
    /// isolation (what `for await` calls).
    @inlinable
    public mutating func next(isolation actor: isolated (any Actor)?) async -> LoadingSnapshot<Content>? {
      await source.next()
    }
  }

  /// Subscribes.
  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(source: makeSource())
  }
}

/// One subscription's `next()`, owned by one iterator (so never shared between tasks).
///
/// Either a repository subscription, read from its ``SubscriberInbox`` after an activation
/// run once, or a source that computes its snapshots (`mapContent`, `combineState`, a sequence
/// of states). Final, with an inlinable ``next()``, so that a repository subscription's
/// receive path specialises where it is iterated; the activation is a closure made where the
/// subscription is (specialised there too).
@usableFromInline
final class SnapshotSource<Content: Sendable> {
  /// The inbox of a repository subscription; `nil` for a computing source.
  @usableFromInline let inbox: SubscriberInbox<Content>?
  /// Run before the first snapshot is read from ``inbox``: it activates the param's
  /// coordinator. `nil` once it has run.
  @usableFromInline var activation: (() async -> Void)?
  /// The next snapshot of a computing source.
  @usableFromInline let nextSnapshot: (() async -> LoadingSnapshot<Content>?)?

  /// A source computing its snapshots with `next`.
  init(_ next: @escaping () async -> LoadingSnapshot<Content>?) {
    inbox = nil
    activation = nil
    nextSnapshot = next
  }

  /// A repository subscription: `activation` once, then `inbox`; dropping the source
  /// finishes the inbox (unsubscribes).
  @inlinable
  init(inbox: SubscriberInbox<Content>, activation: @escaping () async -> Void) {
    self.inbox = inbox
    self.activation = activation
    nextSnapshot = nil
  }

  /// The next snapshot, received on the caller's isolation.
  @inlinable
  nonisolated(nonsending) func next() async -> LoadingSnapshot<Content>? {
    if let inbox {
      if let activation {
        self.activation = nil
        await activation()
      }
      return await inbox.next()
    }
    return await nextSnapshot?()
  }

  deinit {
    inbox?.finish()
  }
}
