public import Foundation

/// Where a ``NetworkHandler`` caches whole responses by a target's
/// ``TargetGroup/storageKey``, each valid until a date the request chooses (Lynn's storage
/// managers).
///
/// Two stores come with KilnNetwork, both on any `KeyValueStore` of `String` keys and `Data`
/// values (a `MemoryCache`, `DiskCache`, `SQLiteStore`, `UserDefaultsStore` of KilnStorage…):
/// ``ResponseItemStore`` keeps one response per key, ``ResponseListStore`` a bounded list.
///
/// ```swift
/// let handler = NetworkHandler(transport: transport, storage: ResponseItemStore(MemoryCache<String, Data>()))
/// let feed = try await handler.request(API.feed, validUntil: { _ in Date().addingTimeInterval(300) })
/// ```
///
/// A stored entry that cannot be read back (corrupt, or written by another format) is a miss,
/// and is removed.
public protocol ResponseStore: Sendable {
  /// The response stored under `key` that is still valid at `now` (valid while
  /// `now <= validUntil`), or `nil`.
  ///
  /// - Parameters:
  ///   - key: The target's storage key.
  ///   - now: The current date.
  /// - Throws: The underlying store's error; the handler then goes to the network.
  func response(forKey key: String, now: Date) async throws -> HTTPResponse?

  /// Stores `response` under `key`, valid until `validUntil`.
  ///
  /// - Parameters:
  ///   - response: The whole response: status, headers and body.
  ///   - key: The target's storage key.
  ///   - validUntil: The last date the response may be served.
  ///   - now: The current date.
  /// - Throws: The underlying store's error; the handler still returns the response.
  func save(_ response: HTTPResponse, forKey key: String, validUntil: Date, now: Date) async throws

  /// Removes whatever is stored under `key`.
  ///
  /// - Parameter key: The target's storage key.
  func removeResponses(forKey key: String) async throws
}
