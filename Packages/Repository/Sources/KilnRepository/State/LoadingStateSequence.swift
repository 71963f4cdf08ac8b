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
    let source: SnapshotSource<Content>

    /// The next state, or `nil` once the task is cancelled.
    public mutating func next() async -> LoadingState<Content>? {
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
    let source: SnapshotSource<Content>

    /// The next snapshot, or `nil` once the task is cancelled.
    public mutating func next() async -> LoadingSnapshot<Content>? {
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
/// Not final: a repository subscription (``FlowSubscriptionSource``) overrides ``next()`` and
/// keeps its state in stored properties, one object per subscription instead of a closure
/// context and a box for each captured variable.
@usableFromInline
class SnapshotSource<Content: Sendable> {
  private let nextSnapshot: (() async -> LoadingSnapshot<Content>?)?

  init(_ next: @escaping () async -> LoadingSnapshot<Content>?) {
    nextSnapshot = next
  }

  /// For subclasses, which override ``next()``.
  @usableFromInline
  init() {
    nextSnapshot = nil
  }

  func next() async -> LoadingSnapshot<Content>? {
    await nextSnapshot?()
  }
}
