public import Foundation

/// A ``Loader`` that answers from a cache while its entry is fresh, and otherwise loads and
/// stores the object with a new expiry.
///
/// ```swift
/// let articles = CachedLoader<Int, Article>(cache: MemoryCache(entryLifetime: nil), lifetime: .seconds(3600)) { id in
///   try await api.article(id)
/// }
/// await articles.load(key: 7)      // loads and caches
/// await articles.load(key: 7)      // from the cache
/// await articles.refresh(key: 7)   // drops the entry and loads again
/// ```
@MainActor
public final class CachedLoader<Key: Hashable & Sendable, Object: Sendable> {
  /// The loader publishing the state (observe it, or the forwarding properties below).
  public let loader: Loader<Key, Object>
  /// The cache.
  public let cache: any KeyValueStore<Key, Object>

  /// Creates a cached loader.
  ///
  /// - Parameters:
  ///   - cache: Where objects are kept.
  ///   - lifetime: How long a cached object stays fresh (one hour by default).
  ///   - now: The wall clock that dates entries.
  ///   - load: Loads the object of a key when the cache has no fresh one.
  public init(
    cache: any KeyValueStore<Key, Object>,
    lifetime: Duration = .seconds(3600),
    now: @escaping @Sendable () -> Date = Date.init,
    load: @escaping @Sendable (Key) async throws -> Object
  ) {
    self.cache = cache
    loader = Loader { key in
      if let entry = try? await cache.entry(forKey: key), !entry.isExpired(at: now()) {
        return entry.value
      }
      let object = try await load(key)
      try? await cache.setValue(object, forKey: key, expiresAt: now().addingTimeInterval(lifetime.timeInterval))
      return object
    }
  }

  /// The last loaded object (observable through ``loader``).
  public var object: Object? { loader.object }
  /// The error of the last request.
  public var error: (any Error)? { loader.error }
  /// Whether a request is running.
  public var isLoading: Bool { loader.isLoading }

  /// Called with each loaded object.
  public var loadCompleted: (@MainActor (Key, Object) -> Void)? {
    get { loader.loadCompleted }
    set { loader.loadCompleted = newValue }
  }

  /// The cached object of `key` while fresh, else a load that refreshes the cache.
  public func load(key: Key) async {
    await loader.load(key: key)
  }

  /// Drops the cached entry of `key` and loads it again.
  public func refresh(key: Key) async {
    try? await cache.removeValue(forKey: key)
    await loader.refresh(key: key)
  }

  /// Cancels every running request.
  public func cancel() {
    loader.cancel()
  }
}
