import Benchmark
import Foundation
import KilnBenchmarkSupport
import KilnStorage
import Synchronization

/// The floor: a dictionary behind the standard library's `Mutex`, with no limits, no
/// recency order and no expiry.
final class MutexDictionary: Sendable {
  let storage = Mutex<[Int: Int]>([:])

  subscript(key: Int) -> Int? {
    get { storage.withLock { $0[key] } }
    set { storage.withLock { $0[key] = newValue } }
  }
}

/// Foundation's `NSCache` needs class keys and values; the keys are made once, outside the
/// measurement, so only the cache's own cost is measured.
final class Box: Sendable {
  let value: Int
  init(_ value: Int) { self.value = value }
}

/// `NSCache` is thread-safe (documented so), but not marked `Sendable` on Linux.
final class SendableNSCache: @unchecked Sendable {
  let cache = NSCache<NSNumber, Box>()
}

private let keyCount = 1_000

func registerMemoryCacheBenchmarks() {
  // A cache as an application configures it: a count limit above the working set and no
  // lifetime, like the bare dictionary it is measured against.
  let cache = MemoryCache<Int, Int>(countLimit: 10_000, entryLifetime: nil)
  let floor = MutexDictionary()
  let nsCache = SendableNSCache()
  let nsKeys = (0..<keyCount).map { NSNumber(value: $0) }
  let boxes = (0..<keyCount).map { Box($0) }
  for key in 0..<keyCount {
    cache[key] = key
    floor[key] = key
    nsCache.cache.setObject(boxes[key], forKey: nsKeys[key])
  }

  comparison("MemoryCache hit vs Mutex<[Int: Int]>") { benchmark in
    var key = 0
    for _ in benchmark.scaledIterations {
      blackHole(cache[key])
      key = key == keyCount - 1 ? 0 : key + 1
    }
  } baseline: { benchmark in
    var key = 0
    for _ in benchmark.scaledIterations {
      blackHole(floor[key])
      key = key == keyCount - 1 ? 0 : key + 1
    }
  }

  comparison("MemoryCache set vs Mutex<[Int: Int]>") { benchmark in
    var key = 0
    for _ in benchmark.scaledIterations {
      cache[key] = key
      key = key == keyCount - 1 ? 0 : key + 1
    }
  } baseline: { benchmark in
    var key = 0
    for _ in benchmark.scaledIterations {
      floor[key] = key
      key = key == keyCount - 1 ? 0 : key + 1
    }
  }

  comparison("MemoryCache hit vs NSCache") { benchmark in
    var key = 0
    for _ in benchmark.scaledIterations {
      blackHole(cache[key])
      key = key == keyCount - 1 ? 0 : key + 1
    }
  } baseline: { benchmark in
    var key = 0
    for _ in benchmark.scaledIterations {
      blackHole(nsCache.cache.object(forKey: nsKeys[key]))
      key = key == keyCount - 1 ? 0 : key + 1
    }
  }

  comparison("MemoryCache set vs NSCache") { benchmark in
    var key = 0
    for _ in benchmark.scaledIterations {
      cache[key] = key
      key = key == keyCount - 1 ? 0 : key + 1
    }
  } baseline: { benchmark in
    var key = 0
    for _ in benchmark.scaledIterations {
      nsCache.cache.setObject(boxes[key], forKey: nsKeys[key])
      key = key == keyCount - 1 ? 0 : key + 1
    }
  }

  // The same hit with a lifetime, which costs a read of the
  // injected clock per hit (the floor has no expiry at all).
  let expiring = MemoryCache<Int, Int>(countLimit: 10_000, entryLifetime: .seconds(3600))
  for key in 0..<keyCount { expiring[key] = key }
  comparison("MemoryCache hit with a lifetime vs Mutex<[Int: Int]>") { benchmark in
    var key = 0
    for _ in benchmark.scaledIterations {
      blackHole(expiring[key])
      key = key == keyCount - 1 ? 0 : key + 1
    }
  } baseline: { benchmark in
    var key = 0
    for _ in benchmark.scaledIterations {
      blackHole(floor[key])
      key = key == keyCount - 1 ? 0 : key + 1
    }
  }

  // Every set evicts the least recently used entry.
  let full = MemoryCache<Int, Int>(countLimit: keyCount / 2, entryLifetime: nil)
  comparison("MemoryCache set with eviction vs Mutex<[Int: Int]>") { benchmark in
    var key = 0
    for _ in benchmark.scaledIterations {
      full[key] = key
      key = key == keyCount - 1 ? 0 : key + 1
    }
  } baseline: { benchmark in
    var key = 0
    for _ in benchmark.scaledIterations {
      floor[key] = key
      key = key == keyCount - 1 ? 0 : key + 1
    }
  }
}
