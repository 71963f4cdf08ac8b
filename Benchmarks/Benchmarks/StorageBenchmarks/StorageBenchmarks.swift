import Benchmark
import KilnBenchmarkSupport

// KilnStorage's benchmarks arrive with its implementation.
let benchmarks: @Sendable () -> Void = {}
