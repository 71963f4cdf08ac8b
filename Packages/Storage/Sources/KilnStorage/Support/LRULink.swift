/// A slot's neighbours in the recency list (-1 for none), and the hash of its key.
@usableFromInline
struct LRULink {
  /// The next less recently used slot.
  @usableFromInline var older: Int
  /// The next more recently used slot.
  @usableFromInline var newer: Int
  /// The hash of the slot's key, for the table's index; meaningless for a free slot.
  @usableFromInline var hash: Int

  @inlinable
  init(older: Int, newer: Int, hash: Int) {
    self.older = older
    self.newer = newer
    self.hash = hash
  }
}
