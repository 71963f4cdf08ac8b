/// A query that saves each value its upstream loads into a storage, then returns it
/// unchanged (Bricks' `StoringQuery`).
///
/// Create one with ``KilnCore/Query/store(into:onSaveError:)`` or
/// ``KilnCore/Query/store(into:forKey:onSaveError:)``.
@frozen
public struct StoringQuery<Upstream: Query, Target: Storage>: Query where Target.Value == Upstream.Success {
  public typealias Success = Upstream.Success
  public typealias Failure = Upstream.Failure

  /// The query whose values are saved.
  public let upstream: Upstream

  /// Where the values are saved.
  public let target: Target

  @usableFromInline
  let onSaveError: (@Sendable (any Error) -> Void)?

  @inlinable
  init(upstream: Upstream, target: Target, onSaveError: (@Sendable (any Error) -> Void)?) {
    self.upstream = upstream
    self.target = target
    self.onSaveError = onSaveError
  }

  @inlinable @inline(__always)
  public func load() async throws(Failure) -> Success {
    let value = try await upstream.load()
    do {
      try await target.save(value)
    } catch {
      onSaveError?(error)
    }
    return value
  }
}

extension Query {
  /// Saves each loaded value into `storage`; failures are not saved.
  ///
  /// The save completes before the load returns, so the next read of `storage` sees the value.
  /// A failing save never changes the outcome: the value is still returned, and the save's
  /// error goes to `onSaveError`.
  ///
  /// ```swift
  /// let articles = cache
  ///   .expiring(validationPolicy: .maxAge(.seconds(300)))
  ///   .fallback(network.map(with: Article.init).store(into: cache))
  /// ```
  ///
  /// - Parameters:
  ///   - storage: Where to save each loaded value.
  ///   - onSaveError: Called with the error of a failed save; `nil` to ignore such errors.
  /// - Returns: A query with the same outcomes that also saves its values.
  @inlinable
  public func store<Target: Storage>(
    into storage: Target,
    onSaveError: (@Sendable (any Error) -> Void)? = nil
  ) -> StoringQuery<Self, Target> where Target.Value == Success {
    StoringQuery(upstream: self, target: storage, onSaveError: onSaveError)
  }

  /// Saves each loaded value under `key` in `store`, with the store's default lifetime;
  /// failures are not saved.
  ///
  /// ```swift
  /// let profile = network.store(into: cache, forKey: "profile/\(id)")
  /// ```
  ///
  /// - Parameters:
  ///   - store: The key-value store to save into.
  ///   - key: The key to save each value under; other keys are never touched.
  ///   - onSaveError: Called with the error of a failed save; `nil` to ignore such errors.
  /// - Returns: A query with the same outcomes that also saves its values.
  @inlinable
  public func store<Store: KeyValueStore>(
    into store: Store,
    forKey key: Store.Key,
    onSaveError: (@Sendable (any Error) -> Void)? = nil
  ) -> StoringQuery<Self, KeyValueStorage<Store>> where Store.Value == Success {
    StoringQuery(upstream: self, target: store.storage(forKey: key), onSaveError: onSaveError)
  }
}
