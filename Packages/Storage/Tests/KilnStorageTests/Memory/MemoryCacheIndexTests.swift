import KilnStorage
import Testing

/// `MemoryCache` against a plain model of a least-recently-used cache, over long random runs:
/// the table's own hash index (open addressing, entries moved back when one is removed) must
/// find every key it holds and none it does not, whatever the order of insertions, updates,
/// reads, evictions and removals.
@Suite("MemoryCache index", .timeLimit(.minutes(2)))
struct MemoryCacheIndexTests {
  /// A key whose hash is one of only `buckets` values, so that many keys collide and probe
  /// clusters grow long: equal hashes of different keys, and removals in the middle of a
  /// cluster, are exercised on every run.
  struct CollidingKey: Hashable, Sendable {
    let id: Int
    let buckets: Int

    func hash(into hasher: inout Hasher) {
      hasher.combine(id % buckets)
    }

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.id == rhs.id }
  }

  /// A deterministic generator (SplitMix64), so that a failure is reproducible.
  struct SplitMix: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
      state &+= 0x9E37_79B9_7F4A_7C15
      var z = state
      z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
      z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
      return z ^ (z >> 31)
    }
  }

  /// The model: entries from least to most recently used.
  struct Model<Key: Hashable> {
    var entries: [(key: Key, value: Int)] = []
    let countLimit: Int

    mutating func set(_ key: Key, _ value: Int) {
      entries.removeAll { $0.key == key }
      entries.append((key, value))
      if entries.count > countLimit { entries.removeFirst() }
    }

    mutating func get(_ key: Key) -> Int? {
      guard let index = entries.firstIndex(where: { $0.key == key }) else { return nil }
      let entry = entries.remove(at: index)
      entries.append(entry)
      return entry.value
    }

    mutating func remove(_ key: Key) {
      entries.removeAll { $0.key == key }
    }
  }

  func run<Key: Hashable & Sendable>(
    seed: UInt64, steps: Int, keyCount: Int, countLimit: Int, key makeKey: (Int) -> Key
  ) {
    var random = SplitMix(state: seed)
    let cache = MemoryCache<Key, Int>(countLimit: countLimit, entryLifetime: nil)
    var model = Model<Key>(countLimit: countLimit)
    for step in 0..<steps {
      let key = makeKey(Int.random(in: 0..<keyCount, using: &random))
      switch Int.random(in: 0..<100, using: &random) {
      case 0..<45:
        cache[key] = step
        model.set(key, step)
      case 45..<80:
        #expect(cache[key] == model.get(key), "step \(step): read of \(key)")
      case 80..<99:
        cache[key] = nil
        model.remove(key)
      default:
        cache.removeAll()
        model.entries.removeAll()
      }
      if step % 64 == 0 || step == steps - 1 {
        #expect(cache.keys == model.entries.map(\.key), "step \(step): recency order")
        #expect(cache.count == model.entries.count)
        for (key, _) in model.entries { #expect(cache.contains(key), "step \(step): \(key) is held") }
      }
    }
    for (key, value) in model.entries { #expect(cache[key] == value) }
  }

  @Test("random operations on Int keys agree with the model", arguments: [1, 2, 3] as [UInt64])
  func intKeys(seed: UInt64) {
    run(seed: seed, steps: 20_000, keyCount: 300, countLimit: 100) { $0 }
  }

  @Test("random operations on keys whose hashes collide agree with the model", arguments: [1, 2] as [UInt64])
  func collidingKeys(seed: UInt64) {
    run(seed: seed, steps: 10_000, keyCount: 120, countLimit: 40) { CollidingKey(id: $0, buckets: 7) }
  }

  @Test("a cache that grows far past its first index, then empties, finds every key")
  func growAndShrink() {
    let cache = MemoryCache<Int, Int>(entryLifetime: nil)
    for key in 0..<5_000 { cache[key] = key }
    #expect(cache.count == 5_000)
    for key in stride(from: 0, to: 5_000, by: 2) { cache[key] = nil }
    for key in 0..<5_000 { #expect(cache[key] == (key.isMultiple(of: 2) ? nil : key)) }
    for key in stride(from: 1, to: 5_000, by: 2) { cache[key] = nil }
    #expect(cache.count == 0)
    cache[7] = 7
    #expect(cache[7] == 7)
  }
}
