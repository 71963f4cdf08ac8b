public import Foundation

/// A store of values by key, each with a stored-at date and an optional expiry.
///
/// Every Kiln store conforms — memory, disk, SQLite, PostgreSQL — so any of them can back
/// a query pipeline, the network layer's response cache or a repository.
///
/// ```swift
/// try await store.setValue(article, forKey: "article/7", expiresAt: .now.addingTimeInterval(600))
/// if let entry = try await store.entry(forKey: "article/7") {
///   print(entry.value, entry.storedAt)
/// }
/// ```
///
/// ## Expiry
///
/// A store never returns an entry that has expired by its own clock: ``entry(forKey:)``
/// answers `nil` once the entry's `expiresAt` has passed (the store may delete it then or
/// later). Passing `nil` as `expiresAt` to ``setValue(_:forKey:expiresAt:)`` asks for the
/// store's default lifetime; a store without one keeps the value until it is removed or
/// evicted. Pass `.distantFuture` to opt out of a default lifetime.
///
/// Freshness that is softer than expiry — "refresh after five minutes, but serve the old
/// value meanwhile" — belongs to a ``ValidationPolicy`` judging ``CacheEntry/storedAt``.
public protocol KeyValueStore<Key, Value>: Sendable {
  /// The key type.
  associatedtype Key: Hashable & Sendable

  /// The stored value type.
  associatedtype Value: Sendable

  /// The entry stored under `key`, or `nil` when there is none or it has expired.
  ///
  /// - Throws: When the store cannot be read (I/O, a closed database). A corrupt entry is
  ///   a miss, not an error.
  func entry(forKey key: Key) async throws -> CacheEntry<Value>?

  /// Stores `value` under `key`, replacing any previous entry.
  ///
  /// - Parameters:
  ///   - value: The value to store.
  ///   - key: Its key.
  ///   - expiresAt: When it expires; `nil` applies the store's default lifetime, if any.
  /// - Throws: When the store cannot be written.
  func setValue(_ value: Value, forKey key: Key, expiresAt: Date?) async throws

  /// Removes the entry stored under `key`, if any.
  ///
  /// - Throws: When the store cannot be written.
  func removeValue(forKey key: Key) async throws

  /// Removes every entry.
  ///
  /// - Throws: When the store cannot be written.
  func removeAll() async throws
}

extension KeyValueStore {
  /// The value stored under `key`, or `nil` when there is none or it has expired.
  ///
  /// - Throws: When the store cannot be read.
  @inlinable
  public func value(forKey key: Key) async throws -> Value? {
    try await entry(forKey: key)?.value
  }

  /// Stores `value` under `key` with the store's default lifetime.
  ///
  /// - Throws: When the store cannot be written.
  @inlinable
  public func setValue(_ value: Value, forKey key: Key) async throws {
    try await setValue(value, forKey: key, expiresAt: nil)
  }

  /// The single-value ``Storage`` view of one key.
  ///
  /// Loading it reads the key (``StorageError/empty`` when absent or expired), saving it
  /// writes the key with the store's default lifetime, clearing it removes the key; other
  /// keys are never touched. Its ``Storage/timestamp`` is the entry's ``CacheEntry/storedAt``.
  ///
  /// ```swift
  /// let articles = cache.storage(forKey: "articles")
  /// let pipeline = articles.expiring(validationPolicy: .maxAge(.minutes(5)))
  /// ```
  ///
  /// - Parameter key: The key to view.
  /// - Returns: A storage bound to `key`.
  @inlinable
  public func storage(forKey key: Key) -> KeyValueStorage<Self> {
    KeyValueStorage(store: self, key: key)
  }
}

/// The ``Storage`` view of one key of a ``KeyValueStore``.
///
/// Create one with ``KeyValueStore/storage(forKey:)``.
@frozen
public struct KeyValueStorage<Store: KeyValueStore>: Storage {
  public typealias Value = Store.Value

  /// The store holding the value.
  public let store: Store

  /// The key this view reads and writes.
  public let key: Store.Key

  /// Creates the view of `key` in `store`.
  @inlinable
  public init(store: Store, key: Store.Key) {
    self.store = store
    self.key = key
  }

  /// When the key's entry was stored; `nil` when there is none, it has expired, or the
  /// store cannot be read.
  @inlinable
  public var timestamp: Date? {
    get async {
      try? await store.entry(forKey: key)?.storedAt
    }
  }

  @inlinable
  public func load() async throws -> Value {
    guard let entry = try await store.entry(forKey: key) else { throw StorageError.empty }
    return entry.value
  }

  @inlinable
  public func save(_ value: Value) async throws {
    try await store.setValue(value, forKey: key, expiresAt: nil)
  }

  @inlinable
  public func clear() async throws {
    try await store.removeValue(forKey: key)
  }
}
