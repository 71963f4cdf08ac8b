import Benchmark
import Foundation
import KilnBenchmarkSupport
import KilnQuery
import Synchronization

// MARK: - Fixtures shared by both sides of each comparison

/// An in-memory storage: a value and its timestamp behind a lock (NSLock, so the fixture
/// stays visible to Thread Sanitizer should anyone run it there).
final class MemoryStorage<Value: Sendable>: Storage, @unchecked Sendable {
  // @unchecked: `value` and `stamp` are only read and written while holding `lock`.
  private let lock = NSLock()
  private var value: Value?
  private var stamp: Date?

  init(_ value: Value? = nil) {
    self.value = value
    self.stamp = value == nil ? nil : Date()
  }

  var timestamp: Date? {
    lock.withLock { stamp }
  }

  func load() async throws -> Value {
    guard let value = lock.withLock({ value }) else { throw StorageError.empty }
    return value
  }

  func save(_ value: Value) async throws {
    let now = Date()
    lock.withLock {
      self.value = value
      self.stamp = now
    }
  }

  func clear() async throws {
    lock.withLock {
      value = nil
      stamp = nil
    }
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

let benchmarks: @Sendable () -> Void = {
  // MARK: Pipeline

  // `cache.expiring(...).fallback(source.map(...).notify(...).store(into: cache))`, with a
  // cache that is never valid, so every load runs all five decorators: check the timestamp,
  // fall back to the source, map, notify, save. The baseline is the same work written by hand.
  let source = MemoryStorage<Int>(7)
  let cache = MemoryStorage<Article>()
  let policy = NeverValidPolicy()
  let pipeline = cache.expiring(validationPolicy: policy)
    .fallback(
      source
        .map(makeArticle)
        .notify(onSuccess: { blackHole($0.id) })
        .store(into: cache)
    )

  @inline(never)
  @Sendable
  func handWritten() async throws -> Article {
    if policy.isValid(timestamp: cache.timestamp, now: Date()) {
      do {
        return try await cache.load()
      } catch {}
    }
    let article = makeArticle(try await source.load())
    blackHole(article.id)
    do {
      try await cache.save(article)
    } catch {}
    return article
  }

  comparison("pipeline: map, notify, fallback, store, expiring") { benchmark in
    for _ in benchmark.scaledIterations {
      blackHole(try await pipeline.load())
    }
  } baseline: { benchmark in
    for _ in benchmark.scaledIterations {
      blackHole(try await handWritten())
    }
  }

  // MARK: Single flight

  // 10,000 callers share one load that ends once all of them are waiting; the baseline is
  // 10,000 child tasks awaiting one shared `Task`. Per operation = per joining caller.
  comparison("serial(): 10,000 concurrent callers", batch: callers) { benchmark in
    for _ in benchmark.scaledIterations {
      let latch = Latch()
      let shared = AnyQuery<Int, any Error> {
        await latch.wait()
        return 42
      }.serial()
      try await joinAll(latch: latch) { try await shared.load() }
    }
  } baseline: { benchmark in
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
  // figure minus this one is what joining a shared load costs each caller. No target: the
  // baseline does less work on purpose.
  comparison("serial(): 10,000 callers over bare child tasks (join cost)", batch: callers) { benchmark in
    for _ in benchmark.scaledIterations {
      let latch = Latch()
      let shared = AnyQuery<Int, any Error> {
        await latch.wait()
        return 42
      }.serial()
      try await joinAll(latch: latch) { try await shared.load() }
    }
  } baseline: { benchmark in
    for _ in benchmark.scaledIterations {
      let latch = Latch()
      try await joinAll(latch: latch) { 42 }
    }
  }
}
