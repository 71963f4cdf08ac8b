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

/// A loading state with the origin of its content.
public struct LoadingSnapshot<Content: Sendable>: Sendable {
  /// The state, exactly as ``LoadingStateSequence`` emits it.
  public var state: LoadingState<Content>
  /// Where the content came from; `nil` when there is no content or it was combined.
  public var origin: DataOrigin?

  /// Creates a snapshot.
  public init(state: LoadingState<Content>, origin: DataOrigin?) {
    self.state = state
    self.origin = origin
  }
}
