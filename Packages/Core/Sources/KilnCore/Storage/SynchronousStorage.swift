public import Foundation

/// A single stored value with a synchronous API, for storages that never need to suspend
/// (a value in memory, a preference).
///
/// Adapt one to the asynchronous ``Storage`` protocol with ``asAsyncStorage()``, or use
/// it directly as a query with ``asQuery()``.
///
/// ```swift
/// let settings = SettingsStorage()           // some SynchronousStorage<Settings>
/// let query = settings.asQuery()             // a Query that throws StorageError.empty when empty
/// ```
///
/// Conforming types whose operations cannot fail simply omit `throws`.
public protocol SynchronousStorage<Value>: Sendable {
  /// The stored value's type.
  associatedtype Value: Sendable

  /// When the current value was saved; `nil` when the storage is empty.
  var timestamp: Date? { get }

  /// The stored value, or `nil` when the storage is empty.
  ///
  /// - Throws: Whatever the underlying medium throws.
  func load() throws -> Value?

  /// Replaces the stored value and stamps it with the current time.
  ///
  /// - Throws: Whatever the underlying medium throws.
  func save(_ value: Value) throws

  /// Removes the stored value.
  ///
  /// - Throws: Whatever the underlying medium throws.
  func clear() throws
}

extension SynchronousStorage {
  /// This storage seen through the asynchronous ``Storage`` protocol.
  ///
  /// - Returns: An adapter whose `load()` throws ``StorageError/empty`` when this storage
  ///   holds no value.
  @inlinable
  public func asAsyncStorage() -> SynchronousStorageAdapter<Self> {
    SynchronousStorageAdapter(self)
  }

  /// This storage as a ``Query`` that loads the stored value.
  ///
  /// The query is the same adapter as ``asAsyncStorage()``, so it can also be saved into.
  ///
  /// - Returns: A query whose load throws ``StorageError/empty`` when this storage holds no
  ///   value.
  @inlinable
  public func asQuery() -> SynchronousStorageAdapter<Self> {
    SynchronousStorageAdapter(self)
  }
}

/// Presents a ``SynchronousStorage`` as an asynchronous ``Storage``.
///
/// Create one with ``SynchronousStorage/asAsyncStorage()``.
@frozen
public struct SynchronousStorageAdapter<Base: SynchronousStorage>: Storage {
  public typealias Value = Base.Value

  /// The adapted storage.
  public let base: Base

  /// Adapts `base`.
  @inlinable
  public init(_ base: Base) {
    self.base = base
  }

  @inlinable
  public var timestamp: Date? {
    base.timestamp
  }

  @inlinable
  public func load() async throws -> Value {
    guard let value = try base.load() else { throw StorageError.empty }
    return value
  }

  @inlinable
  public func save(_ value: Value) async throws {
    try base.save(value)
  }

  @inlinable
  public func clear() async throws {
    try base.clear()
  }
}
