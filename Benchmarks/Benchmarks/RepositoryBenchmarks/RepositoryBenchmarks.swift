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

/// Measures every iteration of `benchmark`: `send` one new value (the iteration's number) to
/// `subscribers` subscribers, then wait until `deliveries` has counted it for each of them,
/// on top of the `delivered` deliveries counted before. The loop every fan-out side shares.
func measureFanOut(
  _ benchmark: Benchmark,
  subscribers: Int,
  deliveries: Deliveries,
  delivered: Int = 0,
  send: (Int) async -> Void
) async {
  var expected = delivered
  benchmark.startMeasurement()
  for iteration in benchmark.scaledIterations {
    await send(iteration)
    expected += subscribers
    await deliveries.wait(untilAtLeast: expected)
  }
  benchmark.stopMeasurement()
}

/// The Kiln side of the fan-out comparisons: one update of a repository's param reaching
/// `subscribers` subscribers of `publish()`, each in its own task, measured until every one
/// has received it.
func repositoryFanOut(_ benchmark: Benchmark, subscribers: Int) async {
  benchmark.stopMeasurement()
  let flowable = AnyStoreFlowable.from(
    cacher: Repository<UnitParam, Int>(), fetcher: AnyFetcher<UnitParam, Int> { _ in 0 })
  await flowable.update(0)
  let deliveries = Deliveries()
  let tasks = (0..<subscribers).map { _ in
    Task {
      for await _ in flowable.publish() { deliveries.add() }
    }
  }
  await deliveries.wait(untilAtLeast: subscribers)
  await measureFanOut(benchmark, subscribers: subscribers, deliveries: deliveries, delivered: subscribers) {
    await flowable.update($0 + 1)
  }
  // Leave nothing running behind: the baseline runs next in the same process.
  for task in tasks { task.cancel() }
  for task in tasks { await task.value }
}

/// One hand-written subscriber: the newest value, or the continuation of its task suspended
/// until one comes. The floor of any fan-out: one suspension and one resumption per
/// subscriber per value, newest wins, no `AsyncSequence`.
final class Mailbox: Sendable {
  private let state = Mutex<(value: Int?, waiter: UnsafeContinuation<Int, Never>?)>((nil, nil))

  /// Suspends until a value comes (or returns the one waiting).
  func next() async -> Int {
    await withUnsafeContinuation { continuation in
      let ready: Int? = state.withLock { state in
        if let value = state.value {
          state.value = nil
          return value
        }
        state.waiter = continuation
        return nil
      }
      if let ready { continuation.resume(returning: ready) }
    }
  }

  /// Hands `value` to the subscriber, resuming it when it waits.
  func send(_ value: Int) {
    let waiter = state.withLock { state -> UnsafeContinuation<Int, Never>? in
      if let waiter = state.waiter {
        state.waiter = nil
        return waiter
      }
      state.value = value
      return nil
    }
    waiter?.resume(returning: value)
  }
}

/// A ``Mailbox`` whose subscriber also stops waiting when its task is cancelled, as any
/// `AsyncSequence` must (an `AsyncStream` does it the same way): each wait registers a task
/// cancellation handler. What that costs is the part of a subscription no implementation can
/// avoid beyond the bare floor.
final class CancellableMailbox: Sendable {
  private let mailbox = Mailbox()

  /// Suspends until a value comes (or returns the one waiting); -1 once the task is cancelled.
  func next() async -> Int {
    await withTaskCancellationHandler {
      await mailbox.next()
    } onCancel: {
      mailbox.send(-1)
    }
  }

  /// Hands `value` to the subscriber, resuming it when it waits.
  func send(_ value: Int) {
    mailbox.send(value)
  }
}

/// A hand-written subscriber's mailbox: what the floors of the fan-out comparisons wait on.
protocol HandWrittenMailbox: Sendable {
  init()
  /// Suspends until a value comes (or returns the one waiting).
  func next() async -> Int
  /// Hands `value` to the subscriber, resuming it when it waits.
  func send(_ value: Int)
}

extension Mailbox: HandWrittenMailbox {}
extension CancellableMailbox: HandWrittenMailbox {}

/// The floor of the fan-out comparisons: `subscribers` tasks, each suspended on its own
/// ``Mailbox`` (or another `Box`), resumed by one loop with each new value.
///
/// Always inlined, so that each floor is specialised for its mailbox where it is called: left
/// generic, a floor paid an allocation per delivery and measured about three times slower.
@inline(__always)
func handWrittenFanOut<Box: HandWrittenMailbox>(
  _ benchmark: Benchmark, subscribers: Int, mailbox: Box.Type = Mailbox.self
) async {
  benchmark.stopMeasurement()
  let deliveries = Deliveries()
  let mailboxes = (0..<subscribers).map { _ in Box() }
  let tasks = mailboxes.map { mailbox in
    Task {
      while await mailbox.next() >= 0 { deliveries.add() }
    }
  }
  await measureFanOut(benchmark, subscribers: subscribers, deliveries: deliveries) { value in
    for mailbox in mailboxes { mailbox.send(value) }
  }
  for mailbox in mailboxes { mailbox.send(-1) }
  for task in tasks { await task.value }
}

let benchmarks: @Sendable () -> Void = {
  // MARK: Fan-out

  // One update reaching 10,000 subscribers of a repository, against yielding the same value
  // to 10,000 bare AsyncStreams, each drained by its own task. Both wait until every
  // subscriber has received it.
  comparison("Repository fan-out: one update to 10,000 subscribers", batch: subscriberCount) { benchmark in
    await repositoryFanOut(benchmark, subscribers: subscriberCount)
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
    await measureFanOut(benchmark, subscribers: subscriberCount, deliveries: deliveries) { value in
      for continuation in continuations { continuation.yield(value) }
    }
    for continuation in continuations { continuation.finish() }
    for task in tasks { await task.value }
  }

  // The same update against its floor: as many tasks suspended on hand-written
  // continuations, resumed by one loop (issue 25). Per operation = per subscriber.
  for (subscribers, label) in [(1_000, "1,000"), (10_000, "10,000")] {
    comparison(
      "Repository fan-out to \(label) subscribers vs resuming as many hand-written continuations",
      batch: subscribers
    ) { benchmark in
      await repositoryFanOut(benchmark, subscribers: subscribers)
    } baseline: { benchmark in
      await handWrittenFanOut(benchmark, subscribers: subscribers)
    }
    // The same against hand-written subscribers that also end when their task is cancelled:
    // the floor of a subscription that honours cancellation. No target; it shows how much of
    // the gap above is the cancellation handler every wait registers.
    comparison(
      "Repository fan-out to \(label) subscribers vs resuming as many cancellable hand-written continuations",
      batch: subscribers
    ) { benchmark in
      await repositoryFanOut(benchmark, subscribers: subscribers)
    } baseline: { benchmark in
      await handWrittenFanOut(benchmark, subscribers: subscribers, mailbox: CancellableMailbox.self)
    }
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
