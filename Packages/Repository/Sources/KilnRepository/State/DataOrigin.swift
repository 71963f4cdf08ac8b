public import Foundation

/// Where the content of a state came from.
///
/// ```swift
/// for await snapshot in flowable.publish().withOrigin() {
///   if snapshot.origin == .cache { showCachedBadge() }
/// }
/// ```
public enum DataOrigin: Hashable, Sendable {
  /// Read from the cacher.
  case cache
  /// Returned by the fetcher.
  case fetcher
  /// Written by `update(_:)`.
  case update
}

/// A loading state with the origin of its content, and the local changes in it that the
/// origin has not confirmed yet.
///
/// ```swift
/// for await snapshot in flowable.publish().withOrigin() {
///   render(snapshot.state)
///   if let pending = snapshot.pending { showBadge("\(pending.count) not sent yet") }
/// }
/// ```
public struct LoadingSnapshot<Content: Sendable>: Sendable {
  /// The state, exactly as ``LoadingStateSequence`` emits it.
  public var state: LoadingState<Content>
  /// Where the content came from; `nil` when there is no content or it was combined. Content
  /// with local changes not yet confirmed is ``DataOrigin/update``.
  public var origin: DataOrigin?
  /// The local changes shown in the content that the origin has not confirmed yet (see
  /// ``Writes/mutate(_:_:)``); `nil` when there are none.
  public var pending: PendingStatus?
  /// Whether only ``pending`` changed since the previous snapshot, the state being the same:
  /// ``LoadingStateSequence`` skips such snapshots, so a plain state subscriber never sees
  /// the same state twice.
  public internal(set) var stateUnchanged = false

  /// Creates a snapshot.
  public init(state: LoadingState<Content>, origin: DataOrigin?) {
    self.state = state
    self.origin = origin
  }

  /// Creates a snapshot with local changes waiting for the origin.
  public init(state: LoadingState<Content>, origin: DataOrigin?, pending: PendingStatus?) {
    self.state = state
    self.origin = origin
    self.pending = pending
  }
}

/// The local changes in a state's content that the origin has not confirmed yet: how many,
/// whether they are being sent, and how sending them went so far.
///
/// Sending failures never turn the state into ``LoadingState/error(_:content:)``: that case
/// says a *load* failed. They show here, while the change stays shown and waits for its next
/// attempt.
public struct PendingStatus: Hashable, Sendable {
  /// The local changes waiting (each a ``Writes/mutate(_:_:)`` not yet confirmed or rejected).
  public var count: Int
  /// How many of them are being sent now.
  public var sendingCount: Int
  /// The failed attempts at sending them, all together.
  public var failedAttempts: Int
  /// The last failure, as text; `nil` while none failed.
  public var lastFailure: String?
  /// When the oldest of them was made.
  public var oldestEnqueuedAt: Date

  /// Creates a status.
  public init(
    count: Int, sendingCount: Int = 0, failedAttempts: Int = 0, lastFailure: String? = nil, oldestEnqueuedAt: Date
  ) {
    self.count = count
    self.sendingCount = sendingCount
    self.failedAttempts = failedAttempts
    self.lastFailure = lastFailure
    self.oldestEnqueuedAt = oldestEnqueuedAt
  }
}
