import Benchmark
import Foundation
import KilnBenchmarkSupport
import KilnNetwork
import KilnRepositoryNetwork

private let replayCount = 10_000
private let scopeCount = 16
private let concurrency = 8

/// `PUT /counts/<param>` with the value as JSON, as a user describes it.
struct CountsAPI: TargetGroup {
  let baseURL: URL
  let param: Int
  let value: Int
  var key: IdempotencyKey?

  var path: String { "counts/\(param)" }
  var method: HTTPMethod { .put }
  var task: NetworkTask { .body(.json(value)) }
  var headers: [String: String]? { key.map { ["Idempotency-Key": $0.headerValue] } }
}

/// An outbox file holding `replayCount` changes over `scopeCount` params, written outside the
/// measured time.
private func queuedOutbox(at url: URL) async throws -> SQLiteOutboxStore {
  for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
  let store = try SQLiteOutboxStore(url: url)
  for index in 0..<replayCount {
    let param = Data("\(index % scopeCount)".utf8)  // Int's automatic codec: JSON
    _ = try await store.append(
      OutboxRecord(channel: "counts", scope: param, param: param, change: Data("\(index)".utf8)))
  }
  return store
}

func outboxReplayBenchmarks() {
  let handler = NetworkHandler(transport: asyncHTTPClientTransport, retryPolicy: .never)
  let baseURL = server.url()
  let file = FileManager.default.temporaryDirectory.appendingPathComponent("kiln-network-benchmarks-outbox.sqlite")
  let setUp: @Sendable () async throws -> Void = {
    _ = try await handler.request(CountsAPI(baseURL: baseURL, param: 0, value: 0))
  }

  // 10,000 changes queued while offline (16 params), replayed when the app starts again:
  // the outbox opens its SQLite file, shows every change as pending, and sends them in
  // order per param, 8 at a time, through a handler with AsyncHTTPClient to a loopback
  // server, removing each confirmed entry from the file. The baseline sends the same 10,000
  // requests (with their Idempotency-Key headers) through the same handler, 8 workers each
  // sending its params' requests in order.
  comparison(
    "Outbox replay of 10,000 queued writes vs the same requests through the handler (AsyncHTTPClient, 8 in flight)",
    batch: replayCount, maxIterations: 10, setUp: setUp
  ) { benchmark in
    benchmark.stopMeasurement()
    let store = try await queuedOutbox(at: file)
    let mutator = HTTPMutator<Int, Int, Int, CountsAPI>(
      handler: handler, apply: { value, _ in value },
      target: { value, param in CountsAPI(baseURL: baseURL, param: param, value: value) })
    benchmark.startMeasurement()
    let outbox = try await Outbox.open(store, options: OutboxOptions(maxConcurrentSends: concurrency))
    let repository = Repository<Int, Int>()
    _ = try await repository.writes(
      through: mutator, outbox: outbox, channel: "counts", paramCodec: .automatic, changeCodec: .automatic)
    await outbox.waitUntilDrained()
    benchmark.stopMeasurement()
    let left = await outbox.entries.count
    precondition(left == 0, "the replay did not drain: \(left) entries left")
    await outbox.close()
    await store.close()
  } baseline: { benchmark in
    benchmark.stopMeasurement()
    let targets = (0..<replayCount).map { index in
      CountsAPI(baseURL: baseURL, param: index % scopeCount, value: index, key: IdempotencyKey())
    }
    benchmark.startMeasurement()
    try await withThrowingTaskGroup(of: Void.self) { group in
      for worker in 0..<concurrency {
        group.addTask {
          for target in targets where target.param % concurrency == worker {
            _ = try await handler.request(target)
          }
        }
      }
      try await group.waitForAll()
    }
    benchmark.stopMeasurement()
  }
}
