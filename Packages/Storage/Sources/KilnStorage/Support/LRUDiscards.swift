/// What an insertion pushed out: the value it replaced and the entries it evicted.
///
/// Returned so that the owner can release them (and run their deinitialisers) after
/// leaving its lock. The first eviction is held inline: a full cache evicts one entry per
/// insertion, and that should not allocate.
@usableFromInline
struct LRUDiscards<Key: Hashable, Value> {
  /// The previous value of the inserted key, if any.
  @usableFromInline var replaced: Value?
  /// The first entry evicted, if any.
  @usableFromInline var firstEvicted: LRUNode<Key, Value>?
  /// The other entries evicted, least recently used first.
  @usableFromInline var moreEvicted: [LRUNode<Key, Value>] = []

  @inlinable
  init() {}

  /// Every evicted entry, least recently used first.
  @inlinable
  var evicted: [LRUNode<Key, Value>] {
    guard let firstEvicted else { return [] }
    return [firstEvicted] + moreEvicted
  }

  @inlinable
  mutating func append(_ node: LRUNode<Key, Value>) {
    if firstEvicted == nil { firstEvicted = node } else { moreEvicted.append(node) }
  }
}
