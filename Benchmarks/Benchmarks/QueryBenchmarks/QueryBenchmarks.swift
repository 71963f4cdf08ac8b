import Benchmark
import Foundation
import KilnBenchmarkSupport
import KilnCore
import KilnQuery
import KilnStorage
import Synchronization

// MARK: - The floor

/// The least a single-value storage can be: a value and its timestamp behind the standard
/// library's `Mutex`, in the benchmark's own module. The baselines do the pipeline's work by
/// hand over it, so a Kiln figure includes the cost of Kiln's own store.
final class MinimalStorage<Value: Sendable>: Sendable {
  private let state: Mutex<(value: Value?, timestamp: Date?)>

  init(_ value: Value? = nil) {
    state = Mutex((value, value == nil ? nil : Date()))
  }

  var timestamp: Date? {
    state.withLock { $0.timestamp }
  }

  func load() throws -> Value {
    guard let value = state.withLock({ $0.value }) else { throw StorageError.empty }
    return value
  }

  func save(_ value: Value) {
    let now = Date()
    state.withLock { $0 = (value, now) }
  }
}

/// A one-shot barrier: tasks wait until `open()`.
final class Latch: @unchecked Sendable {
  // @unchecked: `isOpen` and `waiters` are only read and written while holding `lock`.
  private let lock = NSLock()
  private var isOpen = false
  private var waiters: [UnsafeContinuation<Void, Never>] = []

  func wait() async {
    await withUnsafeContinuation { continuation in
      let resumeNow = lock.withLock {
        if isOpen { return true }
        waiters.append(continuation)
        return false
      }
      if resumeNow { continuation.resume() }
    }
  }

  func open() {
    let waiting = lock.withLock {
      isOpen = true
      defer { waiters = [] }
      return waiters
    }
    for continuation in waiting { continuation.resume() }
  }
}

/// The least a shared load's waiters can cost: a value that waiters suspend for, once each,
/// until one task hands it to all of them. What every joining caller of `serial()` does
/// too, without cancellation, priority or a registry.
final class OneShotValue: @unchecked Sendable {
  // @unchecked: `value` and `waiters` are only read and written while holding `lock`.
  private let lock = NSLock()
  private var value: Int?
  private var waiters: [UnsafeContinuation<Int, Never>] = []

  func wait() async -> Int {
    await withUnsafeContinuation { continuation in
      let ready: Int? = lock.withLock {
        if let value { return value }
        waiters.append(continuation)
        return nil
      }
      if let ready { continuation.resume(returning: ready) }
    }
  }

  func set(_ newValue: Int) {
    let waiting = lock.withLock {
      value = newValue
      defer { waiters = [] }
      return waiters
    }
    for continuation in waiting { continuation.resume(returning: newValue) }
  }
}

struct Article: Sendable {
  let id: Int
  let title: String
}

/// The mapping step of the pipeline.
@inline(never)
@Sendable
func makeArticle(_ id: Int) -> Article {
  Article(id: id, title: "Article")
}

let callers = 10_000

/// A counter shared by the child tasks of one iteration.
final class Counter: Sendable {
  let value = Atomic<Int>(0)
}

/// Starts `callers` child tasks that each count themselves, then await `work`; the last one
/// to count itself opens `latch`, so the shared work ends once (nearly) all of them joined —
/// at most the children running on other threads at that instant are still on their way.
@inline(__always)
func joinAll(
  latch: Latch,
  _ work: @escaping @Sendable () async throws -> Int
) async throws {
  let started = Counter()
  try await withThrowingTaskGroup(of: Int.self) { group in
    for _ in 0..<callers {
      group.addTask {
        if started.value.wrappingAdd(1, ordering: .relaxed).newValue == callers {
          latch.open()
        }
        return try await work()
      }
    }
    var total = 0
    for try await value in group { total += value }
    precondition(total == 42 * callers)
  }
}

/// The pipeline of the README, built from public Kiln types only.
func pipeline<Policy: ValidationPolicy>(
  cache: InMemoryStorage<Article>,
  source: InMemoryStorage<Int>,
  policy: Policy
) -> some Query<Article, any Error> {
  cache
    .expiring(validationPolicy: policy)
    .fallback(
      source
        .map(makeArticle)
        .notify(onSuccess: { blackHole($0.id) })
        .store(into: cache)
    )
}

/// The pipeline's work written by hand: read the cache while it is younger than `maxAge`
/// (`nil`: never), otherwise load the source, map, notify and save. Inlined into the
/// measuring loop as the Kiln pipeline is, so neither side pays a call (or an executor hop).
@inline(__always)
func byHand(
  cache: MinimalStorage<Article>,
  source: MinimalStorage<Int>,
  maxAge: Duration?
) async throws -> Article {
  if let maxAge, let timestamp = cache.timestamp,
    Date() <= timestamp.addingTimeInterval(maxAge.timeInterval)
  {
    do {
      return try cache.load()
    } catch {}
  }
  let article = makeArticle(try source.load())
  blackHole(article.id)
  cache.save(article)
  return article
}

let benchmarks: @Sendable () -> Void = {
  // MARK: Pipeline

  // The pipeline as a user writes it, over Kiln's public `InMemoryStorage`:
  // `cache.expiring(...).fallback(source.map(...).notify(...).store(into: cache))`.
  // The baseline is the same work written by hand over `MinimalStorage`: the floor.
  let maxAge = Duration.seconds(3600)

  // A hit: the cache holds a fresh value, so each load reads its timestamp and the clock,
  // then the value.
  let hitCache = InMemoryStorage<Article>(makeArticle(7))
  let hitSource = InMemoryStorage<Int>(7)
  let hitPipeline = pipeline(cache: hitCache, source: hitSource, policy: .maxAge(maxAge))
  let minimalHitCache = MinimalStorage<Article>(makeArticle(7))
  let minimalHitSource = MinimalStorage<Int>(7)

  comparison("pipeline hit: expiring, fallback, map, notify, store") { benchmark in
    for _ in benchmark.scaledIterations {
      blackHole(try await hitPipeline.load())
    }
  } baseline: { benchmark in
    for _ in benchmark.scaledIterations {
      blackHole(try await byHand(cache: minimalHitCache, source: minimalHitSource, maxAge: maxAge))
    }
  }

  // A miss: a policy that never accepts the cache, so each load falls back to the source,
  // maps, notifies and saves into the cache. By hand, such a policy is no check at all.
  let missCache = InMemoryStorage<Article>()
  let missSource = InMemoryStorage<Int>(7)
  let missPipeline = pipeline(cache: missCache, source: missSource, policy: .neverValid)
  let minimalMissCache = MinimalStorage<Article>()
  let minimalMissSource = MinimalStorage<Int>(7)

  comparison("pipeline miss: expiring, fallback, map, notify, store") { benchmark in
    for _ in benchmark.scaledIterations {
      blackHole(try await missPipeline.load())
    }
  } baseline: { benchmark in
    for _ in benchmark.scaledIterations {
      blackHole(try await byHand(cache: minimalMissCache, source: minimalMissSource, maxAge: nil))
    }
  }

  // MARK: serial() on one caller

  // The same pipelines with `serial()` outermost, one caller at a time, against themselves
  // without it: what sharing costs a caller who finds no load to join (issue 25). The
  // baseline is the floor here, not a hand-written pipeline.
  let serialHitPipeline = hitPipeline.serial()
  comparison("serial() pipeline hit, one caller vs the same pipeline without serial()") { benchmark in
    for _ in benchmark.scaledIterations {
      blackHole(try await serialHitPipeline.load())
    }
  } baseline: { benchmark in
    for _ in benchmark.scaledIterations {
      blackHole(try await hitPipeline.load())
    }
  }

  let serialMissPipeline = missPipeline.serial()
  comparison("serial() pipeline miss, one caller vs the same pipeline without serial()") { benchmark in
    for _ in benchmark.scaledIterations {
      blackHole(try await serialMissPipeline.load())
    }
  } baseline: { benchmark in
    for _ in benchmark.scaledIterations {
      blackHole(try await missPipeline.load())
    }
  }

  // MARK: InMemoryStorage

  let storage = InMemoryStorage<Int>(7)
  let minimal = MinimalStorage<Int>(7)

  comparison("InMemoryStorage load vs minimal storage") { benchmark in
    for _ in benchmark.scaledIterations {
      blackHole(try storage.load())
    }
  } baseline: { benchmark in
    for _ in benchmark.scaledIterations {
      blackHole(try minimal.load())
    }
  }

  comparison("InMemoryStorage save vs minimal storage") { benchmark in
    var value = 0
    for _ in benchmark.scaledIterations {
      storage.save(value)
      value &+= 1
    }
  } baseline: { benchmark in
    var value = 0
    for _ in benchmark.scaledIterations {
      minimal.save(value)
      value &+= 1
    }
  }

  // MARK: Single flight

  // The Kiln side of the three comparisons below: 10,000 callers share one `serial()` load
  // that ends once all of them are waiting.
  let serialCallers: @Sendable (Benchmark) async throws -> Void = { benchmark in
    for _ in benchmark.scaledIterations {
      let latch = Latch()
      let shared = AnyQuery<Int, any Error> {
        await latch.wait()
        return 42
      }.serial()
      try await joinAll(latch: latch) { try await shared.load() }
    }
  }

  // The baseline is 10,000 child tasks awaiting one shared `Task`. Per operation = per
  // joining caller.
  comparison("serial(): 10,000 concurrent callers", batch: callers, kiln: serialCallers) { benchmark in
    for _ in benchmark.scaledIterations {
      let latch = Latch()
      let shared = Task<Int, any Error> {
        await latch.wait()
        return 42
      }
      try await joinAll(latch: latch) { try await shared.value }
    }
  }

  // The floor under both: 10,000 child tasks that return at once, joining nothing. Kiln's
  // figure minus this one is what joining a shared load costs each caller. Target: 1.5x.
  comparison(
    "serial(): 10,000 callers over bare child tasks (join cost)", batch: callers, kiln: serialCallers
  ) { benchmark in
    for _ in benchmark.scaledIterations {
      let latch = Latch()
      try await joinAll(latch: latch) { 42 }
    }
  }

  // The floor of any join: the same 10,000 child tasks, each suspending once for a value one
  // task hands to all of them (`OneShotValue`), with no cancellation, priority or registry.
  // A joining caller cannot cost less than a suspension and a resumption (a second run of
  // its task), which the bare child tasks above never pay. Target: 1.2x (issue 25).
  comparison(
    "serial(): 10,000 callers over hand-written one-shot waiters", batch: callers, kiln: serialCallers
  ) { benchmark in
    for _ in benchmark.scaledIterations {
      let latch = Latch()
      let shared = OneShotValue()
      let loader = Task {
        await latch.wait()
        shared.set(42)
      }
      try await joinAll(latch: latch) { await shared.wait() }
      await loader.value
    }
  }
}
