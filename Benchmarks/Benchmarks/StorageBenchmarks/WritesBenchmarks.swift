import Benchmark
import Foundation
import KilnBenchmarkSupport
import KilnRepository
import KilnStorage

private let mutateCount = 1_000

/// A mutator whose sends wait until the outbox closes: the benchmark measures making changes,
/// not sending them.
private struct ParkedMutator: Mutator {
  func apply(_ change: Data, to content: Data?) -> Data? { change }

  func send(_ change: Data, param: Int, key: IdempotencyKey) async throws(MutationSendError) -> Data? {
    do { try await Task.sleep(for: .seconds(86_400)) } catch {}
    throw .unreachable(CancellationError())
  }
}

/// Removes a database file and its WAL companions.
private func removeDatabase(_ url: URL) {
  for suffix in ["", "-wal", "-shm"] {
    try? FileManager.default.removeItem(at: URL(fileURLWithPath: url.path + suffix))
  }
}

/// The baseline of every writes comparison: `mutateCount` inserts of 1 KB with sqlite3 into a
/// new database at `file`, in a table whose row IDs are never reused, with the durability of
/// the outbox (one transaction each, WAL, synchronous=NORMAL).
private func rawInserts(_ benchmark: Benchmark, into file: URL) {
  benchmark.stopMeasurement()
  removeDatabase(file)
  let raw = RawOutbox(path: file.path)
  var change = Data(repeating: 42, count: 1_024)
  benchmark.startMeasurement()
  for index in 0..<mutateCount {
    change[0] = UInt8(truncatingIfNeeded: index)
    _ = raw.append(change)
  }
  benchmark.stopMeasurement()
  raw.close()
}

/// `mutateCount` changes of 1 KB through a user's whole write path on a new SQLite outbox at
/// `file`: encoded, appended durably, shown over the content of the param (observed by one
/// subscriber when `observed`, by none otherwise) and handed to the sender.
private func mutations(_ benchmark: Benchmark, into file: URL, observed: Bool) async throws {
  benchmark.stopMeasurement()
  removeDatabase(file)
  let store = try SQLiteOutboxStore(url: file)
  let outbox = try await Outbox.open(store, options: OutboxOptions(maxConcurrentSends: 1))
  let repository = Repository<Int, Data>()
  let writes = try await repository.writes(
    through: ParkedMutator(), outbox: outbox, channel: "notes", paramCodec: .automatic, changeCodec: .automatic)
  var subscriber: Task<Void, Never>?
  if observed {
    let flowable = AnyStoreFlowable.from(cacher: repository, fetcher: AnyFetcher<Int, Data> { _ in Data() }, param: 0)
    await flowable.update(Data())
    subscriber = Task {
      for await _ in flowable.publish() {}
    }
  }
  var change = Data(repeating: 42, count: 1_024)
  benchmark.startMeasurement()
  for index in 0..<mutateCount {
    change[0] = UInt8(truncatingIfNeeded: index)
    try await writes.mutate(0, change)
  }
  benchmark.stopMeasurement()
  subscriber?.cancel()
  await outbox.close()
  await store.close()
}

func registerWritesBenchmarks() {
  registerWritesExperiments()
  let directory = benchmarkDirectory("writes")
  let kilnFile = directory.appendingPathComponent("kiln.sqlite")
  let rawFile = directory.appendingPathComponent("raw.sqlite")

  // A user's change through the whole write path, shown to one subscriber, against the same
  // 1 KB inserted with sqlite3 with the same durability. Each side starts every iteration on
  // a new file.
  comparison(
    "Writes.mutate 1 KB change (shown to 1 subscriber) vs sqlite3 insert of the same bytes", batch: mutateCount
  ) { benchmark in
    try await mutations(benchmark, into: kilnFile, observed: true)
  } baseline: { benchmark in
    rawInserts(benchmark, into: rawFile)
  }
}

/// The parts of a change's cost, each beside the same baseline (no targets): the store's
/// append alone, and the write path without a subscriber.
func registerWritesExperiments() {
  let directory = benchmarkDirectory("writes-x")
  let kilnFile = directory.appendingPathComponent("kiln.sqlite")
  let rawFile = directory.appendingPathComponent("raw.sqlite")
  comparison(
    "SQLiteOutboxStore.append alone (part of Writes.mutate) vs sqlite3 insert of the same bytes", batch: mutateCount
  ) { benchmark in
    benchmark.stopMeasurement()
    removeDatabase(kilnFile)
    let store = try SQLiteOutboxStore(url: kilnFile)
    var change = Data(repeating: 42, count: 1_024)
    benchmark.startMeasurement()
    for index in 0..<mutateCount {
      change[0] = UInt8(truncatingIfNeeded: index)
      _ = try await store.append(
        OutboxRecord(channel: "notes", scope: Data("0".utf8), param: Data("0".utf8), change: change))
    }
    benchmark.stopMeasurement()
    await store.close()
  } baseline: { benchmark in
    rawInserts(benchmark, into: rawFile)
  }
  comparison(
    "Writes.mutate without a subscriber (part of Writes.mutate) vs sqlite3 insert of the same bytes", batch: mutateCount
  ) { benchmark in
    try await mutations(benchmark, into: kilnFile, observed: false)
  } baseline: { benchmark in
    rawInserts(benchmark, into: rawFile)
  }
}
