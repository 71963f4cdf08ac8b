// The bookkeeping behind every bounded Kiln cache: an array of nodes, a hash index from key
// to slot, and a doubly linked recency list threaded through a parallel array of links
// (least recently used first). Every operation is O(1) except the explicit sweeps.
// Not thread-safe: the owner guards it (MemoryCache and SerializableCache with a
// KilnMutex, DiskCache's index with an actor).
//
// Everything is `@inlinable` so that MemoryCache's hot path specialises in the caller's
// module for the caller's key and value types (unspecialised generic code is ~20x slower).
// The links live apart from the nodes so that reordering touches only plain integers.
//
// The index is the table's own open-addressing hash table (linear probing, at most 3/8
// full) of slot numbers, with each slot's hash kept in its link, rather than a
// `Dictionary<Key, Int>`: a key is hashed once per operation. Removing from a dictionary
// hashes the key again and rehashes the keys after it in its probe cluster, so an evicting
// set hashed 2.7 keys (callgrind, `MemoryCache<Int, Int>` of 500 entries); here eviction and
// the cluster repair use the stored hashes, and hash nothing.

/// A key-value table in least-recently-used order with optional count and cost limits.
@usableFromInline
struct LRUTable<Key: Hashable, Value> {
  @usableFromInline var nodes: ContiguousArray<LRUNode<Key, Value>?> = []
  @usableFromInline var links: ContiguousArray<LRULink> = []
  /// The index: a power-of-two number of buckets, each a slot number or `-1` for empty;
  /// empty until the first insertion. `Int32` halves its footprint: it has more buckets than
  /// the table has entries.
  @usableFromInline var buckets: ContiguousArray<Int32> = []
  /// The number of entries.
  @usableFromInline var entryCount = 0
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
  var count: Int { entryCount }

  // MARK: - Index

  /// Where `key` (whose hash is `hash`) is in the index: its bucket and slot, or, when it is
  /// absent, the empty bucket that ends its probe and a slot of `-1` (bucket `-1` when the
  /// index has no buckets yet).
  @inlinable
  @inline(__always)
  func find(_ key: Key, hash: Int) -> (bucket: Int, slot: Int) {
    guard !buckets.isEmpty else { return (-1, -1) }
    return buckets.withUnsafeBufferPointer { buckets in
      links.withUnsafeBufferPointer { links in
        let mask = buckets.count - 1
        var bucket = hash & mask
        while true {
          let slot = Int(buckets[bucket])
          if slot < 0 { return (bucket, -1) }
          if links[slot].hash == hash, nodes[slot]!.key == key { return (bucket, slot) }
          bucket = (bucket + 1) & mask
        }
      }
    }
  }

  /// Records `slot`, whose key is absent and whose hash is stored, in the index at `bucket`
  /// (from ``find(_:hash:)``), growing the index instead when it would be more than 3/8 full
  /// (short probe clusters: removing an entry scans the rest of its cluster).
  @inlinable
  mutating func index(_ slot: Int, at bucket: Int) {
    entryCount += 1
    if entryCount * 8 > buckets.count * 3 {
      rebuildIndex(buckets: Swift.max(16, buckets.count * 2), adding: slot)
      return
    }
    buckets[bucket] = Int32(truncatingIfNeeded: slot)
  }

  /// Rebuilds the index with `count` buckets from the stored hashes (no key is hashed),
  /// with `adding` (whose hash is stored) among the indexed slots.
  @inlinable
  mutating func rebuildIndex(buckets count: Int, adding added: Int) {
    precondition(count <= Int(Int32.max), "LRUTable holds at most 2^31 entries")
    var rebuilt = ContiguousArray<Int32>(repeating: -1, count: count)
    let mask = count - 1
    let links = links
    func place(_ slot: Int32) {
      var bucket = links[Int(slot)].hash & mask
      while rebuilt[bucket] >= 0 { bucket = (bucket + 1) & mask }
      rebuilt[bucket] = slot
    }
    for slot in buckets where slot >= 0 { place(slot) }
    place(Int32(truncatingIfNeeded: added))
    buckets = rebuilt
  }

  /// Removes `slot` from the index, keeping every other key reachable from its home bucket
  /// (backward-shift deletion, guided by the stored hashes).
  @inlinable
  mutating func unindex(_ slot: Int) {
    entryCount -= 1
    let target = Int32(truncatingIfNeeded: slot)
    buckets.withUnsafeMutableBufferPointer { buckets in
      links.withUnsafeBufferPointer { links in
        let mask = buckets.count - 1
        var hole = links[slot].hash & mask
        while buckets[hole] != target { hole = (hole + 1) & mask }
        var next = (hole + 1) & mask
        while true {
          let moved = buckets[next]
          if moved < 0 { break }
          // The entry at `next` may fill the hole unless its home lies cyclically in
          // (hole, next]: moving it before its home would make it unreachable.
          let ideal = links[Int(moved)].hash & mask
          let staysPut = hole <= next ? (hole < ideal && ideal <= next) : (hole < ideal || ideal <= next)
          if !staysPut {
            buckets[hole] = moved
            hole = next
          }
          next = (next + 1) & mask
        }
        buckets[hole] = -1
      }
    }
  }

  /// The entry for `key` without changing the order.
  @inlinable
  func peek(_ key: Key) -> LRUNode<Key, Value>? {
    let slot = find(key, hash: key.hashValue).slot
    return slot < 0 ? nil : nodes[slot]
  }

  /// The entry for `key`, marked as the most recently used.
  @inlinable
  @inline(__always)
  mutating func get(_ key: Key) -> LRUNode<Key, Value>? {
    let slot = find(key, hash: key.hashValue).slot
    guard slot >= 0 else { return nil }
    moveToNewest(slot)
    return nodes[slot]
  }

  /// Marks `key` as the most recently used; `false` when absent.
  @inlinable
  @discardableResult
  mutating func touch(_ key: Key) -> Bool {
    let slot = find(key, hash: key.hashValue).slot
    guard slot >= 0 else { return false }
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
    // One hash of `key` for both cases: the probe that misses it ends at the empty bucket
    // the new entry takes.
    let hash = key.hashValue
    let found = find(key, hash: hash)
    let slot: Int
    if found.slot < 0 {
      slot = insertNew(
        LRUNode(key: key, value: value, cost: cost, storedAt: storedAt, expiresAt: expiresAt), hash: hash,
        at: found.bucket, firstEvicted: &firstEvicted)
    } else {
      slot = found.slot
      // Updating a key: one access to the node (one uniqueness check of the array).
      let oldCost = Self.update(
        &nodes[slot]!, value: value, cost: cost, storedAt: storedAt, expiresAt: expiresAt,
        replaced: &replaced)
      totalCost -= oldCost
      moveToNewest(slot)
    }
    totalCost += cost
    if entryCount > countLimit || totalCost > costLimit {
      evictOldest(keeping: slot, firstEvicted: &firstEvicted, moreEvicted: &moreEvicted)
    }
  }

  /// Inserts `node`, whose key is absent and hashes to `hash`, as the most recently used
  /// entry; `bucket` is where the probe for its key ended. Returns its slot. Apart from
  /// ``insert(_:forKey:cost:storedAt:expiresAt:replaced:firstEvicted:moreEvicted:)`` so that
  /// the update of a present key, a set's hot path, stays small enough to inline.
  @inlinable
  mutating func insertNew(
    _ node: LRUNode<Key, Value>,
    hash: Int,
    at bucket: Int,
    firstEvicted: inout LRUNode<Key, Value>?
  ) -> Int {
    var node = node
    let key = node.key
    let slot: Int
    if entryCount == countLimit, costLimit == .max, oldest >= 0 {
      // Full by count alone: the new entry takes the least recently used entry's slot,
      // which evicts exactly that entry, in place (no free-slot list, no index growth; a
      // third of an evicting set in perf).
      slot = oldest
      unindex(slot)
      unlink(slot)
      swap(&node, &nodes[slot]!)
      totalCost -= node.cost
      firstEvicted = node
      links[slot].hash = hash
      // Removing the old key may have opened a hole in the new key's probe: probe again
      // (no hashing) for the bucket that now ends it.
      entryCount += 1
      let reprobed = find(key, hash: hash).bucket
      buckets[reprobed] = Int32(truncatingIfNeeded: slot)
      link(slot)
    } else {
      if let free = freeSlots.popLast() {
        slot = free
        nodes[slot] = node
        links[slot].hash = hash
      } else {
        slot = nodes.count
        nodes.append(node)
        links.append(LRULink(older: -1, newer: -1, hash: hash))
      }
      index(slot, at: bucket)
      link(slot)
    }
    return slot
  }

  /// Evicts least recently used entries, never `keeping`, until both limits hold.
  @inlinable
  mutating func evictOldest(
    keeping slot: Int,
    firstEvicted: inout LRUNode<Key, Value>?,
    moreEvicted: inout [LRUNode<Key, Value>]?
  ) {
    while entryCount > countLimit || totalCost > costLimit, oldest != slot, let evicted = removeOldest() {
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
    let slot = find(key, hash: key.hashValue).slot
    guard slot >= 0 else { return nil }
    return release(slot)
  }

  /// Removes the entry for `key` if `predicate` accepts it.
  @inlinable
  mutating func remove(_ key: Key, if predicate: (LRUNode<Key, Value>) -> Bool) -> LRUNode<Key, Value>? {
    let slot = find(key, hash: key.hashValue).slot
    guard slot >= 0, predicate(nodes[slot]!) else { return nil }
    return release(slot)
  }

  /// Removes and returns the least recently used entry.
  @inlinable
  mutating func removeOldest() -> LRUNode<Key, Value>? {
    guard oldest >= 0 else { return nil }
    return release(oldest)
  }

  /// Evicts least recently used entries until both limits hold.
  @inlinable
  mutating func enforceLimits() -> [LRUNode<Key, Value>] {
    var evicted: [LRUNode<Key, Value>] = []
    while entryCount > countLimit || totalCost > costLimit, let node = removeOldest() {
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
    nodes = []
    links = []
    buckets = []
    entryCount = 0
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
    result.reserveCapacity(entryCount)
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

  /// Removes the entry in `slot` from the index, the recency list and the nodes.
  @inlinable
  mutating func release(_ slot: Int) -> LRUNode<Key, Value> {
    unindex(slot)
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
    links[slot].older = newest
    links[slot].newer = -1
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
      links[slot].older = previousNewest
      links[slot].newer = -1
      links[previousNewest].newer = slot
      guard link.older >= 0 else { return link.newer }
      links[link.older].newer = link.newer
      return nil
    }
    if let becameOldest { oldest = becameOldest }
    newest = slot
  }
}
