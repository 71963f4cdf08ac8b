public import Foundation

/// A value held by a ``KeyValueStore``, with when it was stored and when it expires.
///
/// An entry is valid up to and including its expiry instant: it has expired only once
/// `now` is strictly later than ``expiresAt``.
@frozen
public struct CacheEntry<Value> {
  /// The stored value.
  public var value: Value

  /// When the value was stored.
  public var storedAt: Date

  /// When the value stops being valid; `nil` when it does not expire.
  public var expiresAt: Date?

  /// Creates an entry.
  ///
  /// - Parameters:
  ///   - value: The stored value.
  ///   - storedAt: When the value was stored.
  ///   - expiresAt: When the value stops being valid; `nil` for never.
  @inlinable
  public init(value: Value, storedAt: Date, expiresAt: Date? = nil) {
    self.value = value
    self.storedAt = storedAt
    self.expiresAt = expiresAt
  }

  /// Whether the entry has expired at `now` (strictly after ``expiresAt``).
  ///
  /// - Parameter now: The instant to judge at.
  /// - Returns: `true` once `now` is later than ``expiresAt``; always `false` without one.
  @inlinable
  public func isExpired(at now: Date) -> Bool {
    guard let expiresAt else { return false }
    return now > expiresAt
  }

  /// The same entry with its value transformed.
  ///
  /// - Parameter transform: Maps the stored value.
  /// - Returns: An entry with the new value and the same dates.
  @inlinable
  public func map<NewValue, Failure: Error>(
    _ transform: (Value) throws(Failure) -> NewValue
  ) throws(Failure) -> CacheEntry<NewValue> {
    CacheEntry<NewValue>(value: try transform(value), storedAt: storedAt, expiresAt: expiresAt)
  }
}

extension CacheEntry: Sendable where Value: Sendable {}
extension CacheEntry: Equatable where Value: Equatable {}
extension CacheEntry: Hashable where Value: Hashable {}
extension CacheEntry: Codable where Value: Codable {}
