import Benchmark
import KilnBenchmarkSupport
import KilnCore

/// The work every case wraps: cheap enough that Kiln's own overhead shows.
@inline(never)
@Sendable
func answer() async throws -> Int {
  42
}

let benchmarks: @Sendable () -> Void = {
  let body: @Sendable () async throws -> Int = answer
  let query = AnyQuery<Int, any Error>(body)

  comparison("AnyQuery.load() vs calling its closure") { benchmark in
    for _ in benchmark.scaledIterations {
      blackHole(try await query.load())
    }
  } baseline: { benchmark in
    for _ in benchmark.scaledIterations {
      blackHole(try await body())
    }
  }

  // The callback form starts a task per load; the baseline is the same closure called
  // directly, so the ratio is the price of the task and the callback.
  comparison("load(completion:) vs calling its closure") { benchmark in
    for _ in benchmark.scaledIterations {
      await query.load { blackHole($0) }.value
    }
  } baseline: { benchmark in
    for _ in benchmark.scaledIterations {
      blackHole(try await body())
    }
  }

  // The same callback form against the task a caller would write by hand: Kiln's own
  // overhead on top of the unavoidable task.
  comparison("load(completion:) vs a hand-written Task") { benchmark in
    for _ in benchmark.scaledIterations {
      await query.load { blackHole($0) }.value
    }
  } baseline: { benchmark in
    for _ in benchmark.scaledIterations {
      let completion: @Sendable (Result<Int, any Error>) -> Void = { blackHole($0) }
      await Task {
        do { completion(.success(try await body())) } catch { completion(.failure(error)) }
      }.value
    }
  }
}
