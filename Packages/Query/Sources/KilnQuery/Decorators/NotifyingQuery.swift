/// A query that runs a side effect with each outcome of its upstream, then passes the outcome
/// on unchanged.
///
/// Create one with ``KilnCore/Query/notify(onSuccess:onFailure:)``.
@frozen
public struct NotifyingQuery<Upstream: Query>: Query {
  public typealias Success = Upstream.Success
  public typealias Failure = Upstream.Failure

  /// The query whose outcomes are observed.
  public let upstream: Upstream

  @usableFromInline
  let onSuccess: (@Sendable (Success) -> Void)?

  @usableFromInline
  let onFailure: (@Sendable (Failure) -> Void)?

  @inlinable
  init(
    upstream: Upstream,
    onSuccess: (@Sendable (Success) -> Void)?,
    onFailure: (@Sendable (Failure) -> Void)?
  ) {
    self.upstream = upstream
    self.onSuccess = onSuccess
    self.onFailure = onFailure
  }

  @inlinable @inline(__always)
  public func load() async throws(Failure) -> Success {
    let value: Success
    do throws(Failure) {
      value = try await upstream.load()
    } catch {
      onFailure?(error)
      throw error
    }
    onSuccess?(value)
    return value
  }
}

extension Query {
  /// Runs a side effect with each outcome — logging, analytics, metrics — without changing it.
  ///
  /// ```swift
  /// let feed = network.notify(
  ///   onSuccess: { articles in metrics.record("feed.loaded", articles.count) },
  ///   onFailure: { error in logger.error("feed failed: \(error)") }
  /// )
  /// ```
  ///
  /// The side effect runs first, synchronously, in the loading task; the caller then gets the
  /// outcome unchanged.
  ///
  /// - Parameters:
  ///   - onSuccess: Called with each loaded value; `nil` for none.
  ///   - onFailure: Called with each failure, cancellations included; `nil` for none.
  /// - Returns: A query with the same outcomes.
  /// - Important: Keep the side effects short: the load returns only after them. Start a
  ///   `Task` inside for slow work.
  @inlinable
  public func notify(
    onSuccess: (@Sendable (Success) -> Void)? = nil,
    onFailure: (@Sendable (Failure) -> Void)? = nil
  ) -> NotifyingQuery<Self> {
    NotifyingQuery(upstream: self, onSuccess: onSuccess, onFailure: onFailure)
  }
}
