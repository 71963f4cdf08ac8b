/// A slot's neighbours in the recency list; -1 for none.
@usableFromInline
struct LRULink {
  /// The next less recently used slot.
  @usableFromInline var older: Int
  /// The next more recently used slot.
  @usableFromInline var newer: Int

  @inlinable
  init(older: Int, newer: Int) {
    self.older = older
    self.newer = newer
  }
}
