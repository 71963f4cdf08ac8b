public import Benchmark

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
  comparison(
    name,
    batch: operations.rawValue,
    scalingFactor: operations,
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
  comparison(
    name,
    batch: batch,
    scalingFactor: .one,
    maxDuration: maxDuration,
    maxIterations: maxIterations,
    setUp: setUp,
    kiln: kiln,
    baseline: baseline
  )
}

private func comparison(
  _ name: String,
  batch: Int,
  scalingFactor: BenchmarkScalingFactor,
  maxDuration: Duration,
  maxIterations: Int,
  setUp: (@Sendable () async throws -> Void)?,
  kiln: @escaping @Sendable (Benchmark) async throws -> Void,
  baseline: @escaping @Sendable (Benchmark) async throws -> Void
) {
  let configuration = Benchmark.Configuration(
    metrics: [.wallClock, .mallocCountTotal],
    timeUnits: .nanoseconds,
    warmupIterations: 3,
    scalingFactor: scalingFactor,
    maxDuration: maxDuration,
    maxIterations: maxIterations,
    setup: setUp
  )
  for (side, body) in [("kiln", kiln), ("baseline", baseline)] {
    Benchmark("\(name) | \(side) ×\(batch)", configuration: configuration) { benchmark in
      try await body(benchmark)
    }
  }
}
