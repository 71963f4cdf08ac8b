import Benchmark
import Foundation
import KilnBenchmarkSupport
import KilnStorage

private let entryCount = 10_000
private let payload = Data((0..<1_024).map { UInt8(truncatingIfNeeded: $0 &* 131) })

/// Fills `directory` with `count` one-entry-per-file entries unless it already holds them.
private func populate(_ directory: URL, count: Int, valueSize: Int) async throws {
  let existing = (try? FileManager.default.contentsOfDirectory(atPath: directory.path).count) ?? 0
  guard existing != count else { return }
  try? FileManager.default.removeItem(at: directory)
  let cache = try DiskCache<String, Data>(directory: directory)
  let value = Data(count: valueSize)
  for index in 0..<count { try await cache.setValue(value, forKey: "key-\(index)") }
}

func registerDiskCacheBenchmarks() {
  let kilnDirectory = benchmarkDirectory("disk-kiln")
  let plainDirectory = benchmarkDirectory("disk-plain")
  let cache = try! DiskCache<String, Data>(directory: kilnDirectory)
  let keys = (0..<entryCount).map { "key-\($0)" }
  let plainURLs = (0..<entryCount).map { plainDirectory.appendingPathComponent("\($0)") }

  // Both sides write the same bytes (1 KB) as one file per entry, replacing the files of
  // the previous iteration: Kiln hashes the key, adds its 40-byte header and checksum,
  // writes a temporary file, renames it and updates its index.
  comparison("DiskCache write 10,000 × 1 KB vs Data.write(.atomic)", batch: entryCount) { _ in
    for key in keys { try await cache.setValue(payload, forKey: key) }
  } baseline: { _ in
    for url in plainURLs { try payload.write(to: url, options: .atomic) }
  }

  comparison(
    "DiskCache read 10,000 × 1 KB vs Data(contentsOf:)", batch: entryCount,
    setUp: {
      for key in keys { try await cache.setValue(payload, forKey: key) }
      for url in plainURLs { try payload.write(to: url, options: .atomic) }
    },
    kiln: { _ in
      for key in keys { blackHole(try await cache.value(forKey: key)) }
    },
    baseline: { _ in
      for url in plainURLs { blackHole(try Data(contentsOf: url)) }
    }
  )

  // Opening a cache does not list its directory: the first read costs the same with
  // 100,000 entries as with 1,000.
  // A smoke run, which checks only that the benchmark runs, fills a smaller directory.
  let largeCount = isSmokeRun ? 2_000 : 100_000
  let large = benchmarkDirectory("disk-open-\(largeCount)")
  let small = benchmarkDirectory("disk-open-1k")
  comparison(
    "DiskCache open + first read: 100,000 vs 1,000 entries", operations: .one,
    setUp: {
      try await populate(large, count: largeCount, valueSize: 100)
      try await populate(small, count: 1_000, valueSize: 100)
    },
    kiln: { benchmark in
      for _ in benchmark.scaledIterations {
        let opened = try DiskCache<String, Data>(directory: large)
        blackHole(try await opened.value(forKey: "key-500"))
      }
    },
    baseline: { benchmark in
      for _ in benchmark.scaledIterations {
        let opened = try DiskCache<String, Data>(directory: small)
        blackHole(try await opened.value(forKey: "key-500"))
      }
    }
  )
}
