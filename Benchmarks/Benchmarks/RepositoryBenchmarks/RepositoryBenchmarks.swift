import Benchmark
import KilnBenchmarkSupport
import KilnRepository
import Synchronization

/// How many subscribers the fan-out comparison feeds.
let subscriberCount = 10_000

/// Counts deliveries from many tasks; the measuring task waits for a total.
final class Deliveries: Sendable {
  private let count = Atomic<Int>(0)

  func add() {
    count.wrappingAdd(1, ordering: .relaxed)
  }

  func wait(untilAtLeast total: Int) async {
    while count.load(ordering: .relaxed) < total { await Task.yield() }
  }
}

let benchmarks: @Sendable () -> Void = {
  // MARK: Fan-out

  // One update reaching 10,000 subscribers of a repository, against yielding the same value
  // to 10,000 bare AsyncStreams, each drained by its own task. Both wait until every
  // subscriber has received it.
  comparison("Repository fan-out: one update to 10,000 subscribers", batch: subscriberCount) { benchmark in
    benchmark.stopMeasurement()
    let flowable = AnyStoreFlowable.from(
      cacher: Repository<UnitParam, Int>(), fetcher: AnyFetcher<UnitParam, Int> { _ in 0 })
    await flowable.update(0)
    let deliveries = Deliveries()
    let tasks = (0..<subscriberCount).map { _ in
      Task {
        for await _ in flowable.publish() { deliveries.add() }
      }
    }
    await deliveries.wait(untilAtLeast: subscriberCount)
    var expected = subscriberCount
    benchmark.startMeasurement()
    for iteration in benchmark.scaledIterations {
      await flowable.update(iteration + 1)
      expected += subscriberCount
      await deliveries.wait(untilAtLeast: expected)
    }
    benchmark.stopMeasurement()
    // Leave nothing running behind: the baseline runs next in the same process.
    for task in tasks { task.cancel() }
    for task in tasks { await task.value }
  } baseline: { benchmark in
    benchmark.stopMeasurement()
    let deliveries = Deliveries()
    var continuations: [AsyncStream<Int>.Continuation] = []
    var tasks: [Task<Void, Never>] = []
    for _ in 0..<subscriberCount {
      let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
      continuations.append(continuation)
      tasks.append(
        Task {
          for await _ in stream { deliveries.add() }
        })
    }
    var expected = 0
    benchmark.startMeasurement()
    for iteration in benchmark.scaledIterations {
      for continuation in continuations { continuation.yield(iteration) }
      expected += subscriberCount
      await deliveries.wait(untilAtLeast: expected)
    }
    benchmark.stopMeasurement()
    for continuation in continuations { continuation.finish() }
    for task in tasks { await task.value }
  }

  // MARK: First emission

  // Subscribing to a param whose memory cache is valid and receiving the first state,
  // against the floor of doing it by hand: a MemoryCache read yielded through one bare
  // AsyncStream and received.
  let repository = Repository<UnitParam, Int>()
  let flowable = AnyStoreFlowable.from(cacher: repository, fetcher: AnyFetcher<UnitParam, Int> { _ in 0 })
  let memory = MemoryCache<Int, Int>(entryLifetime: nil)
  memory[0] = 42
  comparison("Repository first emission from a valid memory cache", operations: .kilo) { benchmark in
    benchmark.stopMeasurement()
    await flowable.update(42)
    benchmark.startMeasurement()
    for _ in benchmark.scaledIterations {
      for await state in flowable.publish() {
        blackHole(state.content)
        break
      }
    }
  } baseline: { benchmark in
    for _ in benchmark.scaledIterations {
      let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
      var iterator = stream.makeAsyncIterator()
      continuation.yield(memory[0]!)
      blackHole(await iterator.next())
    }
  }
}
