// kiln-demo — the main job: a real pipeline, end to end, against a real HTTP server on
// loopback, printing what happens and how long it takes.
//
//   swift run kiln-demo
//
// 1. memory → disk → network, with retry and de-duplication, surviving a restart
// 2. retry with exponential backoff against a failing endpoint
// 3. pagination, each page cached in SQLite
// 4. search-as-you-type debounced with KilnDispatch, delivered on a queue
// 5. typed targets through a NetworkHandler: Retry-After honoured, the wire logged, a
//    response cache, exact percent-encoding
// 6. offline: the server stops; the stale value on disk is served
// 7. a repository paged both ways over memory + disk + network, through an outage
// 8. two processes share a PostgreSQL store (trait PostgreSQL; KILN_POSTGRES_URL or a throwaway server)
// 9. offline writes through a durable outbox: made offline, the app killed, sent once after a restart

import Dispatch
import Foundation
import KilnDispatch
import KilnNetwork
import KilnQuery
import KilnStorage
import _KilnTestServer

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

let clock = ContinuousClock()

func timed<T>(_ work: () async throws -> T) async rethrows -> (T, Duration) {
  let start = clock.now
  let value = try await work()
  return (value, start.duration(to: clock.now))
}

func show(_ duration: Duration) -> String {
  let microseconds = Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) / 1e12
  return microseconds >= 1_000
    ? String(format: "%.1f ms", microseconds / 1_000) : String(format: "%.0f µs", microseconds)
}

func step(_ title: String) {
  print("\n\(title)")
}

func check(_ condition: Bool, _ message: @autoclosure () -> String) {
  guard condition else {
    print("✘ \(message())")
    exit(1)
  }
}

await runPostgresNodeIfRequested()  // the second process of step 8
await runOutboxWriterIfRequested()  // the second process of step 9
let server = try await DemoAPI.start()
let workspace = FileManager.default.temporaryDirectory.appendingPathComponent("kiln-demo-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: workspace, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: workspace) }
print("Kiln demo — a JSON API on \(server.baseURL), caches in \(workspace.path)")

// MARK: 1. Memory → disk → network

step("1. The feed: memory, else disk, else the network (retried, de-duplicated), stored in both")
let disk = try DiskCache<String, Feed>(directory: workspace.appendingPathComponent("disk"))
func feedPipeline(memory: MemoryCache<String, Feed>) -> some Query<Feed, any Error> {
  let cache = TieredCache(memory: memory, disk: disk).storage(forKey: "feed")
  return
    cache
    .expiring(validationPolicy: .maxAge(.milliseconds(300)))
    .fallback(
      GetJSON<Feed>(url: server.url("/feed"))
        .retry(.exponential(maxAttempts: 3, initial: .milliseconds(20)))
        .serial()
        .store(into: cache)
    )
}
var feed = feedPipeline(memory: MemoryCache(countLimit: 100))

let (first, firstTime) = try await timed { try await feed.load() }
print("   first load: \(first.headline) — from the network in \(show(firstTime))")
let (second, secondTime) = try await timed { try await feed.load() }
print("   again: \(second.headline) — from memory in \(show(secondTime))")
check(second == first, "a fresh cache answers with the stored feed")

feed = feedPipeline(memory: MemoryCache(countLimit: 100))  // an app restart: memory is empty
let (afterRestart, restartTime) = try await timed { try await feed.load() }
print("   after a restart: \(afterRestart.headline) — from disk in \(show(restartTime)), promoted to memory")
check(server.requestCount(path: "/feed") == 1, "memory and disk answered without the network")

try await Task.sleep(for: .milliseconds(350))
let pipeline = feed
let (burst, burstTime) = try await timed {
  try await withThrowingTaskGroup(of: Feed.self) { group in
    for _ in 0..<100 { group.addTask { try await pipeline.load() } }
    var answers = Set<Feed>()
    for try await answer in group { answers.insert(answer) }
    return answers
  }
}
print(
  "   100 screens ask at once after it expired: \(server.requestCount(path: "/feed") - 1) request, "
    + "\(burst.count) answer (\(burst.first!.headline)) in \(show(burstTime))")
check(server.requestCount(path: "/feed") == 2 && burst.count == 1, "concurrent loads share one request")

// MARK: 2. Retry

step("2. A failing endpoint: exponential backoff with full jitter")
let flaky = GetJSON<Feed>(url: server.url("/flaky"))
  .retry(.exponential(maxAttempts: 4, initial: .milliseconds(25), maximum: .milliseconds(200))) {
    failure, attempt, delay in
    print("   attempt \(attempt) failed (\(failure)); retrying in \(show(delay))")
  }
let (recovered, retryTime) = try await timed { try await flaky.load() }
print("   → \(recovered.headline), \(show(retryTime)) in all")
check(server.requestCount(path: "/flaky") == 3, "two failures, then success")

// MARK: 3. Pagination

step("3. Pagination: pages cached in SQLite, fetched once")
let pages = try SQLiteStore<Int, [Article]>(url: workspace.appendingPathComponent("pages.sqlite"))
let paginator = Paginator(firstPage: 1) { page in
  pages.storage(forKey: page)
    .fallback(GetJSON<[Article]>(url: server.url("/articles?page=\(page)")).store(into: pages.storage(forKey: page)))
}
_ = try await paginator.load()
while await paginator.hasMore { _ = try await paginator.loadMore() }
let articles = await paginator.data
print("   \(articles.count) articles in \(server.requestCount(path: "/articles")) requests (the last page was empty)")
let again = Paginator(firstPage: 1) { page in pages.storage(forKey: page) }
_ = try await again.load()
_ = try await again.loadMore()
_ = try await again.loadMore()
print("   a second paginator reads \(await again.data.count) articles from SQLite without the network")
check(articles.count == 12 && server.requestCount(path: "/articles") == 4, "three pages of four, then an empty page")
await pages.close()

// MARK: 4. Debounced search

step("4. Search as you type: debounced with KilnDispatch, one request for the last query")
let searches = DispatchQueue(label: "search")
let delivered = DispatchSemaphore(value: 0)
for typed in ["k", "ki", "kil", "kiln"] {
  searches.once(operationId: "search", after: 0.15) {
    let query = GetJSON<[String]>(url: server.url("/search?q=\(typed)"))
    runAsync(deliverOn: .global()) {
      try await query.load()
    } completion: { result in
      print("   \"\(typed)\" → \((try? result.get()) ?? [])")
      delivered.signal()
    }
  }
  try await Task.sleep(for: .milliseconds(30))  // typing speed
}
await withCheckedContinuation { continuation in
  DispatchQueue.global().async {
    delivered.wait()
    continuation.resume()
  }
}
print("   4 keystrokes, \(server.requestCount(path: "/search")) request")
check(server.requestCount(path: "/search") == 1, "the debounce ran only the newest search")

// MARK: 5. A network handler

step("5. Typed targets through a NetworkHandler: Retry-After honoured, the wire logged, responses cached")
try await NetworkStep.run(server: server, transport: URLSessionTransport())

// MARK: 6. Offline

step("6. Offline: the server stops")
try await server.stop()
try await Task.sleep(for: .milliseconds(350))
let strict = feed
let forgiving = feed.fallback(disk.storage(forKey: "feed"))  // any age, when the network is down
do {
  _ = try await strict.load()
  check(false, "the network is down")
} catch let error as URLError {
  print("   the strict pipeline fails after its retries: URLError \(error.code.rawValue), the server is unreachable")
} catch {
  print("   the strict pipeline fails after its retries: \(error)")
}
let (stale, staleTime) = try await timed { try await forgiving.load() }
print("   the forgiving one serves the stale feed from disk: \(stale.headline) (\(show(staleTime)))")
check(stale == burst.first!, "the last stored feed")

try await repositoryStep(workspace: workspace)
try await runPostgresStep()
try await outboxStep(workspace: workspace)

print("\nDone: every step behaved as described.")
