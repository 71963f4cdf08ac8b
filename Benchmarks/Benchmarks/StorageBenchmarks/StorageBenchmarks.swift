import Benchmark
import Foundation
import KilnBenchmarkSupport
import KilnStorage

let benchmarks: @Sendable () -> Void = {
  registerMemoryCacheBenchmarks()
  registerDiskCacheBenchmarks()
  registerSerializableCacheBenchmarks()
  registerSQLiteStoreBenchmarks()
  registerOutboxBenchmarks()
  registerWritesBenchmarks()
}

/// A directory under the system's temporary directory that survives between runs, so
/// large fixtures are built once.
func benchmarkDirectory(_ name: String) -> URL {
  let url = FileManager.default.temporaryDirectory.appendingPathComponent("kiln-storage-benchmarks/\(name)")
  try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  return url
}
