import Benchmark
import KilnBenchmarkSupport

// KilnQuery's benchmarks arrive with its implementation.
let benchmarks: @Sendable () -> Void = {}
