public import Benchmark
import Foundation
import MallocInterposerSwift
import Synchronization

/// Whether this run is a smoke run (`KILN_BENCH_SMOKE=1`, which `Scripts/bench.sh --smoke`
/// sets): every benchmark runs one measured round without warm-up, to prove it still
/// builds and runs. Its figures are not measurements.
public let isSmokeRun = ProcessInfo.processInfo.environment["KILN_BENCH_SMOKE"] == "1"

/// The folder each comparison writes its rounds to (`KILN_BENCH_ROUNDS`, which
/// `Scripts/bench.sh` sets); without it, the rounds are measured but not written.
private let roundsFolder = ProcessInfo.processInfo.environment["KILN_BENCH_ROUNDS"]

/// Registers one comparison: a Kiln benchmark and its baseline, measured in the same process
/// and the same time window, interleaved.
///
/// The comparison is one benchmark whose every iteration is a **round**: one iteration of
/// `kiln` and one of `baseline`, back to back, the side that goes first alternating from one
/// round to the next. Load from other processes therefore falls on both sides alike, and
/// each round gives one ratio between two measurements taken moments apart.
/// `Scripts/bench.sh` reports the median of those per-round ratios, beside each side's median
/// time per operation, checked against the `targets.tsv` beside the benchmark target's sources.
///
/// Each body runs `operations` operations per iteration, typically
/// `for _ in benchmark.scaledIterations { blackHole(...) }`. A body may exclude work from its
/// measurement with `benchmark.stopMeasurement()` and `benchmark.startMeasurement()`: only
/// what runs between a start and a stop counts, the whole body when it calls neither.
///
/// - Parameters:
///   - name: The case, as it appears in the report and in `targets.tsv`.
///   - operations: How many operations one iteration of each body performs: the scaling
///     factor for micro-benchmarks, or the batch size a body loops over itself.
///   - maxDuration: How long the comparison may run, both sides together.
///   - maxIterations: How many rounds it may run.
///   - setUp: Runs once before the first round (outside the measured time).
///   - kiln: The Kiln side.
///   - baseline: The baseline side, doing the same work without Kiln.
public func comparison(
  _ name: String,
  operations: BenchmarkScalingFactor = .kilo,
  maxDuration: Duration = .seconds(4),
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
  maxDuration: Duration = .seconds(10),
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
  maxDuration: Duration = .seconds(10),
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
  let warmupIterations = isSmokeRun ? 0 : warmupIterations
  let rounds = Rounds(name: name, kilnBatch: kilnBatch, baselineBatch: baselineBatch)
  let configuration = Benchmark.Configuration(
    // The framework's own figures cover whole rounds (both sides); the report reads the
    // rounds file instead. Counting allocations has the framework enable the interposer.
    metrics: [.wallClock, .mallocCountTotal],
    timeUnits: .nanoseconds,
    warmupIterations: warmupIterations,
    scalingFactor: scalingFactor,
    maxDuration: isSmokeRun ? .milliseconds(1) : maxDuration,
    maxIterations: isSmokeRun ? 1 : maxIterations,
    setup: setUp,
    teardown: { try rounds.write() }
  )
  Benchmark("\(name) | kiln ×\(kilnBatch) vs baseline ×\(baselineBatch)", configuration: configuration) {
    benchmark in
    let kilnFirst = benchmark.currentIteration.isMultiple(of: 2)
    let (kiln, baseline) = try await measureRound(
      benchmark, first: kilnFirst ? kiln : baseline, second: kilnFirst ? baseline : kiln)
    if benchmark.currentIteration >= warmupIterations {
      rounds.append(kilnFirst ? Round(kiln: kiln, baseline: baseline) : Round(kiln: baseline, baseline: kiln))
    }
  }
}

/// What one side of one round measured.
private struct Side {
  var nanoseconds: Int64 = 0
  var allocations = 0
}

/// One round: each side's measurement.
private struct Round {
  var kiln: Side
  var baseline: Side
}

/// Runs `first`, then `second`, measuring each between its (implicit or explicit)
/// `startMeasurement()` and `stopMeasurement()` calls.
///
/// The framework's measurement hooks are set aside meanwhile, then its stop hook is called
/// once, so that its own figures cover the whole round and it keeps track of the run's time.
private func measureRound(
  _ benchmark: Benchmark,
  first: @Sendable (Benchmark) async throws -> Void,
  second: @Sendable (Benchmark) async throws -> Void
) async throws -> (Side, Side) {
  let frameworkStart = benchmark.measurementPreSynchronization
  let frameworkStop = benchmark.measurementPostSynchronization
  defer {
    benchmark.measurementPreSynchronization = frameworkStart
    benchmark.measurementPostSynchronization = frameworkStop
  }
  let firstSide = try await measure(benchmark, first)
  let secondSide = try await measure(benchmark, second)
  benchmark.measurementPreSynchronization = frameworkStart
  benchmark.measurementPostSynchronization = frameworkStop
  // The last stopMeasurement() above marked the measurement complete, so the framework
  // skips its own implicit stop: call its hook here instead.
  frameworkStop?(false)
  return (firstSide, secondSide)
}

/// Runs one side's body once and returns what ran between its starts and stops.
private func measure(_ benchmark: Benchmark, _ body: @Sendable (Benchmark) async throws -> Void) async throws -> Side {
  let meter = Meter()
  benchmark.measurementPreSynchronization = { _ in meter.start() }
  benchmark.measurementPostSynchronization = { _ in meter.stop() }
  benchmark.startMeasurement()
  try await body(benchmark)
  benchmark.stopMeasurement()
  return meter.side
}

/// Adds up the time and allocations between each start and the following stop.
///
/// Only the task running a body calls it, one call after the other.
private final class Meter: @unchecked Sendable {
  private(set) var side = Side()
  private var started: ContinuousClock.Instant?
  private var allocationsAtStart = 0

  func start() {
    allocationsAtStart = MallocInterposerSwift.getStatistics().mallocCount
    started = ContinuousClock.now
  }

  func stop() {
    let now = ContinuousClock.now
    guard let started else { return }
    let allocations = MallocInterposerSwift.getStatistics().mallocCount
    let elapsed = started.duration(to: now).components
    side.nanoseconds += elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000
    side.allocations += allocations - allocationsAtStart
    self.started = nil
  }
}

/// The measured rounds of one comparison, written to `KILN_BENCH_ROUNDS` when it ends.
private final class Rounds: Sendable {
  let name: String
  let kilnBatch: Int
  let baselineBatch: Int
  private let rounds = Mutex<[Round]>([])

  init(name: String, kilnBatch: Int, baselineBatch: Int) {
    self.name = name
    self.kilnBatch = kilnBatch
    self.baselineBatch = baselineBatch
  }

  func append(_ round: Round) {
    rounds.withLock { $0.append(round) }
  }

  /// Writes `<case>.json` in the rounds folder: the case, each side's operations per
  /// iteration, and one `[kiln ns, baseline ns, kiln allocations, baseline allocations]`
  /// per round, in the order they ran.
  func write() throws {
    let measured = rounds.withLock { rounds in
      defer { rounds.removeAll() }
      return rounds
    }
    guard let roundsFolder, !measured.isEmpty else { return }
    let document: [String: Any] = [
      "case": name,
      "kilnBatch": kilnBatch,
      "baselineBatch": baselineBatch,
      "rounds": measured.map {
        [$0.kiln.nanoseconds, $0.baseline.nanoseconds, Int64($0.kiln.allocations), Int64($0.baseline.allocations)]
      },
    ]
    let data = try JSONSerialization.data(withJSONObject: document, options: [.sortedKeys])
    let file = URL(fileURLWithPath: roundsFolder).appendingPathComponent("\(UUID().uuidString).json")
    try data.write(to: file)
  }
}

/// Runs `requests` operations with `inFlight` of them running at any time: `inFlight` tasks
/// (one task runs them in turn when `inFlight` is 1), each told its number, from 0, so that a
/// worker can ask for something of its own.
public func runInFlight(
  _ requests: Int, inFlight: Int, _ operation: @escaping @Sendable (_ worker: Int) async throws -> Void
) async throws {
  if inFlight == 1 {
    for _ in 0..<requests { try await operation(0) }
    return
  }
  try await withThrowingTaskGroup(of: Void.self) { group in
    for worker in 0..<inFlight {
      group.addTask {
        for _ in 0..<requests / inFlight { try await operation(worker) }
      }
    }
    try await group.waitForAll()
  }
}
