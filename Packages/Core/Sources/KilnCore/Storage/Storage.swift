public import Foundation

/// A single value that can be loaded, saved and cleared, stamped with when it was saved.
///
/// A storage is a ``Query`` whose load reads the stored value, so it composes with every
/// decorator: `storage.expiring(validationPolicy: .maxAge(.minutes(5)))` reads it only
/// while its ``timestamp`` is fresh, and `network.store(into: storage)` writes into it.
///
/// ```swift
/// let cache = store.storage(forKey: "articles")   // one key of a KeyValueStore
/// try await cache.save(articles)
/// let again = try await cache.load()              // StorageError.empty when empty
/// ```
///
/// - Important: Loading an empty storage throws ``StorageError/empty``.
public protocol Storage<Value>: Query where Success == Value, Failure == any Error {
  /// The stored value's type.
  associatedtype Value: Sendable

  /// When the current value was saved; `nil` when the storage is empty.
  var timestamp: Date? { get async }

  /// Replaces the stored value and stamps it with the current time.
  ///
  /// - Parameter value: The value to store.
  /// - Throws: Whatever the underlying medium throws (a disk or database error).
  func save(_ value: Value) async throws

  /// Removes the stored value; the storage is empty afterwards.
  ///
  /// - Throws: Whatever the underlying medium throws.
  func clear() async throws
}

/// Errors shared by every ``Storage``.
public enum StorageError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The storage holds no value.
  case empty

  public var description: String {
    switch self {
    case .empty: "the storage is empty"
    }
  }
}
