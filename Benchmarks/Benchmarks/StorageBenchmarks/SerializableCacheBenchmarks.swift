import Benchmark
import Foundation
import KilnBenchmarkSupport
import KilnStorage

struct Profile: Codable, Sendable {
  var id: Int
  var name: String
  var bio: String
}

private let keyCount = 1_000

private func profile(_ id: Int) -> Profile {
  Profile(id: id, name: "user \(id)", bio: String(repeating: "b", count: 60))
}

/// A fresh cache of 1,000 entries in an empty directory, flushed.
private func freshCache(_ name: String) async throws -> SerializableCache<Int, Profile> {
  let directory = benchmarkDirectory(name)
  try? FileManager.default.removeItem(at: directory)
  let cache = try SerializableCache<Int, Profile>.load(
    name: "profiles", directory: directory, entryLifetime: nil, writeDelay: .seconds(3_600))
  for key in 0..<keyCount { cache[key] = profile(key) }
  try await cache.flush()
  return cache
}

/// `count` updates cycling over the keys, written to the journal every 100 changes.
private func update(_ cache: SerializableCache<Int, Profile>, count: Int) async throws {
  for step in 0..<count {
    cache[step % keyCount] = profile(step)
    if step % 100 == 99 { try await cache.flush() }
  }
  try await cache.flush()
}

func registerSerializableCacheBenchmarks() {
  // The seed's way: every change re-encodes the whole cache (1,000 entries) and rewrites
  // its file atomically. Its per-change cost does not depend on how many changes are
  // made, so it runs 500 of them per iteration against Kiln's 10,000.
  comparison(
    "SerializableCache 10,000 updates vs rewriting the file per change", kilnBatch: 10_000, baselineBatch: 500
  ) { benchmark in
    benchmark.stopMeasurement()
    let cache = try await freshCache("serializable-kiln")
    benchmark.startMeasurement()
    try await update(cache, count: 10_000)
  } baseline: { benchmark in
    benchmark.stopMeasurement()
    let url = benchmarkDirectory("serializable-rewrite").appendingPathComponent("profiles.json")
    var entries = Dictionary(uniqueKeysWithValues: (0..<keyCount).map { ($0, profile($0)) })
    benchmark.startMeasurement()
    for step in 0..<500 {
      entries[step % keyCount] = profile(step)
      try JSONEncoder().encode(entries).write(to: url, options: .atomic)
    }
  }

  // Linear, not quadratic: 10,000 updates against 1,000 (per run, not per operation).
  comparison("SerializableCache 10,000 updates vs 1,000 updates", batch: 1) { benchmark in
    benchmark.stopMeasurement()
    let cache = try await freshCache("serializable-10k")
    benchmark.startMeasurement()
    try await update(cache, count: 10_000)
  } baseline: { benchmark in
    benchmark.stopMeasurement()
    let cache = try await freshCache("serializable-1k")
    benchmark.startMeasurement()
    try await update(cache, count: 1_000)
  }
}
