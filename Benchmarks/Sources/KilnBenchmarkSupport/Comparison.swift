public import Benchmark
import Foundation

/// Whether this run is a smoke run (`KILN_BENCH_SMOKE=1`, which `Scripts/bench.sh --smoke`
/// sets): every benchmark runs one measured iteration without warm-up, to prove it still
/// builds and runs. Its figures are not measurements.
public let isSmokeRun = ProcessInfo.processInfo.environment["KILN_BENCH_SMOKE"] == "1"

/// Registers one comparison: a Kiln benchmark and its baseline, measured in the same run
/// with the same configuration.
///
/// `Scripts/bench.sh` pairs the two by name (`<name> | kiln ×N` and `<name> | baseline ×N`,
/// where `N` is the number of operations one measured iteration performs) and prints the
/// per-operation figures side by side with their ratio, checked against
/// the `targets.tsv` beside the benchmark target's sources.
///
/// Each body runs `operations` operations per measured iteration, typically
/// `for _ in benchmark.scaledIterations { blackHole(...) }`.
///
/// - Parameters:
///   - name: The case, as it appears in the report and in `targets.tsv`.
///   - operations: How many operations one iteration of each body performs: the scaling
///     factor for micro-benchmarks, or the batch size a body loops over itself.
///   - maxDuration: How long each side may run.
///   - setUp: Runs before each side's measurement (outside the measured time).
///   - kiln: The Kiln side.
///   - baseline: The baseline side, doing the same work without Kiln.
public func comparison(
  _ name: String,
  operations: BenchmarkScalingFactor = .kilo,
  maxDuration: Duration = .seconds(2),
  maxIterations: Int = 100_000,
  setUp: (@Sendable () async throws -> Void)? = nil,
  kiln: @escaping @Sendable (Benchmark) async throws -> Void,
  baseline: @escaping @Sendable (Benchmark) async throws -> Void
) {
  register(
    name,
    kilnBatch: operations.rawValue,
    baselineBatch: operations.rawValue,
    scalingFactor: operations,
    warmupIterations: 3,
    maxDuration: maxDuration,
    maxIterations: maxIterations,
    setUp: setUp,
    kiln: kiln,
    baseline: baseline
  )
}

/// Registers a comparison whose bodies each perform a batch of `batch` operations per
/// iteration themselves (for example: write 10,000 entries), without a scaling factor.
public func comparison(
  _ name: String,
  batch: Int,
  maxDuration: Duration = .seconds(5),
  maxIterations: Int = 50,
  setUp: (@Sendable () async throws -> Void)? = nil,
  kiln: @escaping @Sendable (Benchmark) async throws -> Void,
  baseline: @escaping @Sendable (Benchmark) async throws -> Void
) {
  register(
    name,
    kilnBatch: batch,
    baselineBatch: batch,
    scalingFactor: .one,
    warmupIterations: 3,
    maxDuration: maxDuration,
    maxIterations: maxIterations,
    setUp: setUp,
    kiln: kiln,
    baseline: baseline
  )
}

/// Registers a comparison whose two sides perform different numbers of operations per
/// iteration, for baselines too slow to repeat as often as Kiln's side (a full file rewrite
/// per change): `Scripts/bench.sh` divides each side by its own count, so the ratio is per
/// operation.
///
/// - Parameters:
///   - kilnBatch: How many operations one iteration of `kiln` performs.
///   - baselineBatch: How many operations one iteration of `baseline` performs.
public func comparison(
  _ name: String,
  kilnBatch: Int,
  baselineBatch: Int,
  maxDuration: Duration = .seconds(5),
  maxIterations: Int = 20,
  setUp: (@Sendable () async throws -> Void)? = nil,
  kiln: @escaping @Sendable (Benchmark) async throws -> Void,
  baseline: @escaping @Sendable (Benchmark) async throws -> Void
) {
  register(
    name,
    kilnBatch: kilnBatch,
    baselineBatch: baselineBatch,
    scalingFactor: .one,
    warmupIterations: 1,
    maxDuration: maxDuration,
    maxIterations: maxIterations,
    setUp: setUp,
    kiln: kiln,
    baseline: baseline
  )
}

private func register(
  _ name: String,
  kilnBatch: Int,
  baselineBatch: Int,
  scalingFactor: BenchmarkScalingFactor,
  warmupIterations: Int,
  maxDuration: Duration,
  maxIterations: Int,
  setUp: (@Sendable () async throws -> Void)?,
  kiln: @escaping @Sendable (Benchmark) async throws -> Void,
  baseline: @escaping @Sendable (Benchmark) async throws -> Void
) {
  let configuration = Benchmark.Configuration(
    metrics: [.wallClock, .mallocCountTotal],
    timeUnits: .nanoseconds,
    warmupIterations: isSmokeRun ? 0 : warmupIterations,
    scalingFactor: scalingFactor,
    maxDuration: isSmokeRun ? .milliseconds(1) : maxDuration,
    maxIterations: isSmokeRun ? 1 : maxIterations,
    setup: setUp
  )
  for (side, batch, body) in [("kiln", kilnBatch, kiln), ("baseline", baselineBatch, baseline)] {
    Benchmark("\(name) | \(side) ×\(batch)", configuration: configuration) { benchmark in
      try await body(benchmark)
    }
  }
}
