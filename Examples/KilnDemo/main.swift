// kiln-demo — the main job: a real pipeline, end to end, printing what happens.
//
// Today it runs over KilnCore's pieces: a query with a typed failure, a key-value store
// viewed as a single-key storage, a max-age validation policy and the callback form with
// cancellation. It grows as KilnQuery, KilnStorage, KilnNetwork and KilnRepository land.

import Foundation
import KilnCore
import Synchronization

/// Where the demo's data comes from: a computation that takes a moment and counts its
/// loads, failing with a typed error when told to.
struct Origin: Query {
  enum Failure: Error, CustomStringConvertible {
    case unavailable
    var description: String { "origin unavailable" }
  }

  let loads: Counter
  let available: Bool

  func load() async throws(Failure) -> [String] {
    loads.increment()
    guard available else { throw .unavailable }
    try? await Task.sleep(for: .milliseconds(20))
    return (1...3).map { "article #\($0) (load \(loads.value))" }
  }
}

/// A thread-safe counter for the demo's statistics.
final class Counter: Sendable {
  private let storage = Atomic<Int>(0)
  func increment() { storage.add(1, ordering: .relaxed) }
  var value: Int { storage.load(ordering: .relaxed) }
}

/// A dictionary behind an actor: the smallest honest `KeyValueStore`.
actor DictionaryStore<Key: Hashable & Sendable, Value: Sendable>: KeyValueStore {
  private var entries: [Key: CacheEntry<Value>] = [:]

  func entry(forKey key: Key) -> CacheEntry<Value>? {
    guard let entry = entries[key], !entry.isExpired(at: .now) else { return nil }
    return entry
  }
  func setValue(_ value: Value, forKey key: Key, expiresAt: Date?) {
    entries[key] = CacheEntry(value: value, storedAt: .now, expiresAt: expiresAt)
  }
  func removeValue(forKey key: Key) { entries[key] = nil }
  func removeAll() { entries.removeAll() }
}

/// Cache first while the policy says the stored value is fresh, else the origin, saving
/// what it returns. (KilnQuery's `expiring(...).fallback(... .store(into:))` will replace
/// this hand-written composition.)
struct CachedPipeline<Cache: Storage<[String]>>: Query {
  let cache: Cache
  let origin: Origin
  let policy: any ValidationPolicy

  func load() async throws(any Error) -> [String] {
    if policy.isValid(timestamp: await cache.timestamp, now: .now) {
      print("    cache is fresh → reading the cache")
      return try await cache.load()
    }
    print("    cache is empty or stale → loading from the origin")
    let value = try await origin.load()
    try await cache.save(value)
    return value
  }
}

func timed<T>(_ label: String, _ work: () async throws -> T) async rethrows -> T {
  let clock = ContinuousClock()
  let start = clock.now
  let value = try await work()
  let elapsed = start.duration(to: clock.now)
  print("  \(label): \(elapsed.formatted(.units(allowed: [.milliseconds, .microseconds], width: .narrow)))")
  return value
}

print("Kiln demo — KilnCore pipeline")
let loads = Counter()
let store = DictionaryStore<String, [String]>()
let pipeline = CachedPipeline(
  cache: store.storage(forKey: "articles"),
  origin: Origin(loads: loads, available: true),
  policy: .maxAge(.milliseconds(150)) as MaxAgeValidationPolicy
)

print("1. first load")
let first = try await timed("took") { try await pipeline.load() }
print("    → \(first.joined(separator: ", "))")

print("2. second load, within max age")
let second = try await timed("took") { try await pipeline.load() }
precondition(second == first, "a fresh cache must answer with the stored value")

print("3. after max age")
try await Task.sleep(for: .milliseconds(200))
let third = try await timed("took") { try await pipeline.load() }
print("    → \(third.first ?? "")")

print("4. typed failure from an unavailable origin")
switch await Origin(loads: loads, available: false).result() {
case .success: preconditionFailure("the origin is unavailable")
case .failure(let error): print("    → failed with Origin.Failure: \(error)")  // no cast needed
}

print("5. callback form, cancelled while loading")
let outcome = Mutex<String?>(nil)
let task = AnyQuery<Int, any Error> {
  try await Task.sleep(for: .seconds(10))
  return 1
}.load { result in
  outcome.withLock { $0 = "\(result)" }
}
task.cancel()
await task.value
print("    → completion called once with \(outcome.withLock { $0 ?? "nothing" })")

print("Origin loads: \(loads.value) (expected 3: first load, refresh, failure)")
precondition(loads.value == 3)
print("Done.")
