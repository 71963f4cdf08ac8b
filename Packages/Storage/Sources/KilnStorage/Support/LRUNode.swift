/// A key's entry in an ``LRUTable``.
@usableFromInline
struct LRUNode<Key: Hashable, Value> {
  @usableFromInline var key: Key
  @usableFromInline var value: Value
  /// The entry's cost against the table's cost limit.
  @usableFromInline var cost: Int
  /// Seconds since the reference date when the entry was stored.
  @usableFromInline var storedAt: Double
  /// Seconds since the reference date when the entry expires; `.infinity` for never.
  @usableFromInline var expiresAt: Double

  @inlinable
  init(key: Key, value: Value, cost: Int, storedAt: Double, expiresAt: Double) {
    self.key = key
    self.value = value
    self.cost = cost
    self.storedAt = storedAt
    self.expiresAt = expiresAt
  }
}
