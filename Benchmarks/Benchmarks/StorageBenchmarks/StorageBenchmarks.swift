import Benchmark
import Foundation
import KilnBenchmarkSupport
import KilnStorage

let benchmarks: @Sendable () -> Void = {
  registerMemoryCacheBenchmarks()
  registerDiskCacheBenchmarks()
  registerSerializableCacheBenchmarks()
  registerSQLiteStoreBenchmarks()
}

/// A directory under the system's temporary directory that survives between runs, so
/// large fixtures are built once.
func benchmarkDirectory(_ name: String) -> URL {
  let url = FileManager.default.temporaryDirectory.appendingPathComponent("kiln-storage-benchmarks/\(name)")
  try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  return url
}

/// Registers a comparison whose two sides perform different numbers of operations per
/// iteration: `Scripts/bench.sh` divides each side by its own count, so the ratio is per
/// operation. For baselines too slow to repeat as often as Kiln's side (a full rewrite per
/// change), with the same configuration as `comparison(_:batch:)`.
func perOperationComparison(
  _ name: String,
  kilnBatch: Int,
  baselineBatch: Int,
  maxDuration: Duration = .seconds(5),
  maxIterations: Int = 20,
  setUp: (@Sendable () async throws -> Void)? = nil,
  kiln: @escaping @Sendable (Benchmark) async throws -> Void,
  baseline: @escaping @Sendable (Benchmark) async throws -> Void
) {
  let configuration = Benchmark.Configuration(
    metrics: [.wallClock, .mallocCountTotal],
    timeUnits: .nanoseconds,
    warmupIterations: 1,
    scalingFactor: .one,
    maxDuration: maxDuration,
    maxIterations: maxIterations,
    setup: setUp
  )
  Benchmark("\(name) | kiln ×\(kilnBatch)", configuration: configuration) { try await kiln($0) }
  Benchmark("\(name) | baseline ×\(baselineBatch)", configuration: configuration) { try await baseline($0) }
}
