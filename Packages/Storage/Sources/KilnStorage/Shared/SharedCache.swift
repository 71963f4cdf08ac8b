public import Foundation

/// A cache type with one shared instance, used everywhere in an app (Loadability's shared
/// caches).
///
/// Declare a type per cache, with its store as `static let shared`: every loader and view
/// then reads and writes the same entries, and the store is created once, lazily, on first
/// use.
///
/// ```swift
/// enum ArticleCache: SharedCache {
///   static let shared = MemoryCache<Int, Article>(countLimit: 500)
/// }
///
/// enum ProfileCache: SharedCache {
///   static let shared = try! SerializableCache<String, Profile>.load(name: "profiles")
/// }
///
/// ArticleCache.shared[7] = article
/// let cached = try await ArticleCache.value(forKey: 7)
/// ```
///
/// The static members forward to ``shared``, so a cache *type* can be passed where code
/// expects one (`cache: ArticleCache.self`).
public protocol SharedCache {
  /// The store behind the cache.
  associatedtype Store: KeyValueStore

  /// The one instance of the store.
  static var shared: Store { get }
}

extension SharedCache {
  /// The entry stored under `key` in ``shared``, or `nil`.
  ///
  /// - Throws: What the store throws.
  public static func entry(forKey key: Store.Key) async throws -> CacheEntry<Store.Value>? {
    try await shared.entry(forKey: key)
  }

  /// The value stored under `key` in ``shared``, or `nil`.
  ///
  /// - Throws: What the store throws.
  public static func value(forKey key: Store.Key) async throws -> Store.Value? {
    try await shared.entry(forKey: key)?.value
  }

  /// Stores `value` under `key` in ``shared``.
  ///
  /// - Parameters:
  ///   - value: The value to store.
  ///   - key: Its key.
  ///   - expiresAt: When it expires; `nil` applies the store's default lifetime.
  /// - Throws: What the store throws.
  public static func setValue(_ value: Store.Value, forKey key: Store.Key, expiresAt: Date? = nil) async throws {
    try await shared.setValue(value, forKey: key, expiresAt: expiresAt)
  }

  /// Removes the value stored under `key` in ``shared``.
  ///
  /// - Throws: What the store throws.
  public static func removeValue(forKey key: Store.Key) async throws {
    try await shared.removeValue(forKey: key)
  }

  /// Removes every entry of ``shared``.
  ///
  /// - Throws: What the store throws.
  public static func removeAll() async throws {
    try await shared.removeAll()
  }
}
