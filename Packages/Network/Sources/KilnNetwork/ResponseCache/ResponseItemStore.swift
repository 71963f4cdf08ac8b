public import Foundation
public import KilnCore

/// A ``ResponseStore`` keeping one response per storage key, overwritten by each save (Lynn's
/// item storage manager), in any `KeyValueStore` of `String` keys and `Data` values.
///
/// ```swift
/// let storage = ResponseItemStore(try DiskCache<String, Data>(directory: cachesURL))
/// let handler = NetworkHandler(transport: transport, storage: storage)
/// ```
///
/// Each entry is written with its valid-until date as the store's expiry, so stores that evict
/// expired entries drop it by themselves. An entry that cannot be decoded is a miss and is
/// removed.
public struct ResponseItemStore<Store: KeyValueStore>: ResponseStore where Store.Key == String, Store.Value == Data {
  /// The underlying store.
  public let store: Store

  /// Creates a store.
  ///
  /// - Parameter store: The underlying store.
  public init(_ store: Store) {
    self.store = store
  }

  public func response(forKey key: String, now: Date) async throws -> HTTPResponse? {
    guard let entry = try await store.entry(forKey: key) else { return nil }
    guard let stored = StoredResponse.deserialize(StoredResponse.self, from: entry.value),
      let response = stored.response
    else {
      try await store.removeValue(forKey: key)
      return nil
    }
    return stored.isValid(at: now) ? response : nil
  }

  public func save(_ response: HTTPResponse, forKey key: String, validUntil: Date, now: Date) async throws {
    let data = try StoredResponse.serialize(StoredResponse(response, validUntil: validUntil))
    try await store.setValue(data, forKey: key, expiresAt: validUntil)
  }

  public func removeResponses(forKey key: String) async throws {
    try await store.removeValue(forKey: key)
  }
}
