// The bookkeeping behind every bounded Kiln cache: a dictionary from key to slot, an
// array of nodes, and a doubly linked recency list threaded through a parallel array of
// links (least recently used first). Every operation is O(1) except the explicit sweeps.
// Not thread-safe: the owner guards it (MemoryCache and SerializableCache with a
// KilnMutex, DiskCache's index with an actor).
//
// Everything is `@inlinable` so that MemoryCache's hot path specialises in the caller's
// module for the caller's key and value types (unspecialised generic code is ~20x slower).
// The links live apart from the nodes so that reordering touches only plain integers.

/// A key-value table in least-recently-used order with optional count and cost limits.
@usableFromInline
struct LRUTable<Key: Hashable, Value> {
  @usableFromInline var slots: [Key: Int] = [:]
  @usableFromInline var nodes: ContiguousArray<LRUNode<Key, Value>?> = []
  @usableFromInline var links: ContiguousArray<LRULink> = []
  @usableFromInline var freeSlots: [Int] = []
  @usableFromInline var oldest = -1
  @usableFromInline var newest = -1

  /// The sum of the costs of every entry.
  @usableFromInline var totalCost = 0

  /// The largest number of entries; `Int.max` for no limit.
  @usableFromInline var countLimit: Int

  /// The largest total cost; `Int.max` for no limit.
  @usableFromInline var costLimit: Int

  @inlinable
  init(countLimit: Int = .max, costLimit: Int = .max) {
    self.countLimit = countLimit
    self.costLimit = costLimit
  }

  /// The number of entries.
  @inlinable
  var count: Int { slots.count }

  /// The entry for `key` without changing the order.
  @inlinable
  func peek(_ key: Key) -> LRUNode<Key, Value>? {
    guard let slot = slots[key] else { return nil }
    return nodes[slot]
  }

  /// The entry for `key`, marked as the most recently used.
  @inlinable
  mutating func get(_ key: Key) -> LRUNode<Key, Value>? {
    guard let slot = slots[key] else { return nil }
    moveToNewest(slot)
    return nodes[slot]
  }

  /// Marks `key` as the most recently used; `false` when absent.
  @inlinable
  @discardableResult
  mutating func touch(_ key: Key) -> Bool {
    guard let slot = slots[key] else { return false }
    moveToNewest(slot)
    return true
  }

  /// Whether an entry of `cost` could ever fit under the limits.
  @inlinable
  func canHold(cost: Int) -> Bool {
    cost <= costLimit && countLimit > 0
  }

  /// Inserts or replaces the entry for `key` as the most recently used, then evicts the
  /// least recently used entries until both limits hold.
  ///
  /// - Precondition: ``canHold(cost:)`` is `true` for `cost`.
  @inlinable
  mutating func insert(
    _ value: Value,
    forKey key: Key,
    cost: Int,
    storedAt: Double,
    expiresAt: Double
  ) -> LRUDiscards<Key, Value> {
    var discards = LRUDiscards<Key, Value>()
    insert(value, forKey: key, cost: cost, storedAt: storedAt, expiresAt: expiresAt, into: &discards)
    return discards
  }

  /// ``insert(_:forKey:cost:storedAt:expiresAt:)`` collecting what leaves into the caller's
  /// `discards`, which saves moving them out of a critical section.
  @inlinable
  mutating func insert(
    _ value: Value,
    forKey key: Key,
    cost: Int,
    storedAt: Double,
    expiresAt: Double,
    into discards: inout LRUDiscards<Key, Value>
  ) {
    var firstEvicted: LRUNode<Key, Value>?
    var moreEvicted: [LRUNode<Key, Value>]?
    insert(
      value, forKey: key, cost: cost, storedAt: storedAt, expiresAt: expiresAt,
      replaced: &discards.replaced, firstEvicted: &firstEvicted, moreEvicted: &moreEvicted)
    if let firstEvicted { discards.firstEvicted = firstEvicted }
    if let moreEvicted { discards.moreEvicted += moreEvicted }
  }

  /// The insertion itself, handing what leaves to three separate values rather than an
  /// ``LRUDiscards``: MemoryCache's hot path keeps them as concrete locals, whose release
  /// the compiler inlines, instead of destroying an `LRUDiscards` through its generic value
  /// witness (measured: 10% of a `MemoryCache<Int, Int>` set).
  ///
  /// - Parameters:
  ///   - replaced: Receives the key's previous value, if any.
  ///   - firstEvicted: Receives the first entry evicted, if any.
  ///   - moreEvicted: Receives the other entries evicted, least recently used first; stays
  ///     `nil` when there are none. Optional because destroying a `nil` costs nothing, while
  ///     releasing even an empty array is a call into the runtime on every insertion
  ///     (callgrind: 5% of a `MemoryCache<Int, Int>` set).
  @inlinable
  mutating func insert(
    _ value: Value,
    forKey key: Key,
    cost: Int,
    storedAt: Double,
    expiresAt: Double,
    replaced: inout Value?,
    firstEvicted: inout LRUNode<Key, Value>?,
    moreEvicted: inout [LRUNode<Key, Value>]?
  ) {
    // One hash of `key` for both cases: the defaulted subscript's `modify` finds the key's
    // bucket, or inserts a placeholder there that is overwritten below. A lookup followed by
    // an insertion hashed a new key twice (callgrind: a sixth of an evicting set).
    let slot = Self.claim(&slots[key, default: -1], next: freeSlots.last ?? nodes.count)
    if slot.isNew {
      let node = LRUNode(key: key, value: value, cost: cost, storedAt: storedAt, expiresAt: expiresAt)
      if slot.index == nodes.count {
        nodes.append(node)
        links.append(LRULink(older: -1, newer: -1))
      } else {
        freeSlots.removeLast()
        nodes[slot.index] = node
      }
      link(slot.index)
    } else {
      // Updating a key: one access to the node (one uniqueness check of the array).
      let oldCost = Self.update(
        &nodes[slot.index]!, value: value, cost: cost, storedAt: storedAt, expiresAt: expiresAt,
        replaced: &replaced)
      totalCost -= oldCost
      moveToNewest(slot.index)
    }
    totalCost += cost
    if slots.count > countLimit || totalCost > costLimit {
      evictOldest(keeping: slot.index, firstEvicted: &firstEvicted, moreEvicted: &moreEvicted)
    }
  }

  /// The slot of a key's entry, from the dictionary's storage for it: the existing slot, or
  /// `next` stored there when the key is new (the placeholder is `-1`).
  @inlinable
  @inline(__always)
  static func claim(_ stored: inout Int, next: Int) -> (index: Int, isNew: Bool) {
    guard stored < 0 else { return (stored, false) }
    stored = next
    return (next, true)
  }

  /// Evicts least recently used entries, never `keeping`, until both limits hold.
  ///
  /// Evicting also makes room in the dictionary: a table that evicts reserves room for twice
  /// its entries (so its buckets are at most 3/8 full), because removing a key from Swift's
  /// linearly probed `Dictionary` rehashes the keys after it in its cluster (callgrind, a
  /// `MemoryCache<Int, Int>` of 500 entries: 2.4 extra hashes per evicting set at the
  /// dictionary's own load, 0.7 with the room). The dictionary holds only keys and slot
  /// numbers, so this costs little memory next to the nodes, and only once the table is full.
  @inlinable
  mutating func evictOldest(
    keeping slot: Int,
    firstEvicted: inout LRUNode<Key, Value>?,
    moreEvicted: inout [LRUNode<Key, Value>]?
  ) {
    if slots.capacity < 2 * slots.count { slots.reserveCapacity(2 * slots.count) }
    while slots.count > countLimit || totalCost > costLimit, oldest != slot, let evicted = removeOldest() {
      if firstEvicted == nil {
        firstEvicted = evicted
      } else if moreEvicted == nil {
        moreEvicted = [evicted]
      } else {
        moreEvicted!.append(evicted)
      }
    }
  }

  /// Replaces a node's value and dates in place; returns its previous cost and hands its
  /// previous value to `replaced`.
  @inlinable
  @inline(__always)
  static func update(
    _ node: inout LRUNode<Key, Value>,
    value: Value,
    cost: Int,
    storedAt: Double,
    expiresAt: Double,
    replaced: inout Value?
  ) -> Int {
    let oldCost = node.cost
    replaced = node.value
    node.value = value
    node.cost = cost
    node.storedAt = storedAt
    node.expiresAt = expiresAt
    return oldCost
  }

  /// Removes the entry for `key`.
  @inlinable
  @discardableResult
  mutating func remove(_ key: Key) -> LRUNode<Key, Value>? {
    guard let slot = slots.removeValue(forKey: key) else { return nil }
    return release(slot)
  }

  /// Removes the entry for `key` if `predicate` accepts it.
  @inlinable
  mutating func remove(_ key: Key, if predicate: (LRUNode<Key, Value>) -> Bool) -> LRUNode<Key, Value>? {
    guard let slot = slots[key], predicate(nodes[slot]!) else { return nil }
    slots[key] = nil
    return release(slot)
  }

  /// Removes and returns the least recently used entry.
  @inlinable
  mutating func removeOldest() -> LRUNode<Key, Value>? {
    guard oldest >= 0 else { return nil }
    let slot = oldest
    slots[nodes[slot]!.key] = nil
    return release(slot)
  }

  /// Evicts least recently used entries until both limits hold.
  @inlinable
  mutating func enforceLimits() -> [LRUNode<Key, Value>] {
    var evicted: [LRUNode<Key, Value>] = []
    while slots.count > countLimit || totalCost > costLimit, let node = removeOldest() {
      evicted.append(node)
    }
    return evicted
  }

  /// Removes every entry that has expired at `now` (O(n)).
  @inlinable
  mutating func removeExpired(at now: Double) -> [LRUNode<Key, Value>] {
    var removed: [LRUNode<Key, Value>] = []
    var slot = oldest
    while slot >= 0 {
      let next = links[slot].newer
      let node = nodes[slot]!
      if now > node.expiresAt {
        slots[node.key] = nil
        removed.append(release(slot))
      }
      slot = next
    }
    return removed
  }

  /// Empties the table and returns the old storage, so the owner can release the values
  /// outside its lock.
  @inlinable
  mutating func removeAll() -> ContiguousArray<LRUNode<Key, Value>?> {
    let old = nodes
    slots = [:]
    nodes = []
    links = []
    freeSlots = []
    oldest = -1
    newest = -1
    totalCost = 0
    return old
  }

  /// Every entry, least recently used first.
  @inlinable
  var entriesOldestFirst: [LRUNode<Key, Value>] {
    var result: [LRUNode<Key, Value>] = []
    result.reserveCapacity(slots.count)
    var slot = oldest
    while slot >= 0 {
      result.append(nodes[slot]!)
      slot = links[slot].newer
    }
    return result
  }

  /// The keys, least recently used first.
  @inlinable
  var keysOldestFirst: [Key] {
    entriesOldestFirst.map(\.key)
  }

  // MARK: - Linking

  @inlinable
  mutating func release(_ slot: Int) -> LRUNode<Key, Value> {
    unlink(slot)
    let node = nodes[slot]!
    nodes[slot] = nil
    totalCost -= node.cost
    if slot == nodes.count - 1 {
      nodes.removeLast()
      links.removeLast()
    } else {
      freeSlots.append(slot)
    }
    return node
  }

  /// Appends `slot` as the newest.
  @inlinable
  @inline(__always)
  mutating func link(_ slot: Int) {
    links[slot] = LRULink(older: newest, newer: -1)
    if newest >= 0 { links[newest].newer = slot } else { oldest = slot }
    newest = slot
  }

  @inlinable
  @inline(__always)
  mutating func unlink(_ slot: Int) {
    let link = links[slot]
    if link.older >= 0 { links[link.older].newer = link.newer } else { oldest = link.newer }
    if link.newer >= 0 { links[link.newer].older = link.older } else { newest = link.older }
  }

  /// Moves `slot` to the newest end: the hot path of every hit and every update, so the
  /// four link writes share one access to the links' storage.
  @inlinable
  @inline(__always)
  mutating func moveToNewest(_ slot: Int) {
    let previousNewest = newest
    guard slot != previousNewest else { return }
    // `slot` is in the list and is not the newest, so it has a newer neighbour, and the
    // list's newest entry exists.
    let becameOldest: Int? = links.withUnsafeMutableBufferPointer { links in
      let link = links[slot]
      links[link.newer].older = link.older
      links[slot] = LRULink(older: previousNewest, newer: -1)
      links[previousNewest].newer = slot
      guard link.older >= 0 else { return link.newer }
      links[link.older].newer = link.newer
      return nil
    }
    if let becameOldest { oldest = becameOldest }
    newest = slot
  }
}
