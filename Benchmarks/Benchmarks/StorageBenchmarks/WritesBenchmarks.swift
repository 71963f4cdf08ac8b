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

func registerWritesBenchmarks() {
  registerWritesExperiments()
  let directory = benchmarkDirectory("writes")
  let kilnFile = directory.appendingPathComponent("kiln.sqlite")
  let rawFile = directory.appendingPathComponent("raw.sqlite")

  // A user's change through the whole write path: encoded, appended durably to a SQLite
  // outbox (one transaction each, WAL, synchronous=NORMAL), shown over the content of the
  // param that one subscriber observes, and handed to the sender. The baseline inserts the
  // same 1 KB with sqlite3 into a table whose row IDs are never reused, with the same
  // durability. Each side starts every iteration on a new file.
  comparison(
    "Writes.mutate 1 KB change (shown to 1 subscriber) vs sqlite3 insert of the same bytes", batch: mutateCount
  ) { benchmark in
    benchmark.stopMeasurement()
    removeDatabase(kilnFile)
    let store = try SQLiteOutboxStore(url: kilnFile)
    let outbox = try await Outbox.open(store, options: OutboxOptions(maxConcurrentSends: 1))
    let repository = Repository<Int, Data>()
    let writes = try await repository.writes(
      through: ParkedMutator(), outbox: outbox, channel: "notes", paramCodec: .automatic, changeCodec: .automatic)
    let flowable = AnyStoreFlowable.from(cacher: repository, fetcher: AnyFetcher<Int, Data> { _ in Data() }, param: 0)
    await flowable.update(Data())
    let subscriber = Task {
      for await _ in flowable.publish() {}
    }
    var change = Data(repeating: 42, count: 1_024)
    benchmark.startMeasurement()
    for index in 0..<mutateCount {
      change[0] = UInt8(truncatingIfNeeded: index)
      try await writes.mutate(0, change)
    }
    benchmark.stopMeasurement()
    subscriber.cancel()
    await outbox.close()
    await store.close()
  } baseline: { benchmark in
    benchmark.stopMeasurement()
    removeDatabase(rawFile)
    let raw = RawOutbox(path: rawFile.path)
    var change = Data(repeating: 42, count: 1_024)
    benchmark.startMeasurement()
    for index in 0..<mutateCount {
      change[0] = UInt8(truncatingIfNeeded: index)
      _ = raw.append(change)
    }
    benchmark.stopMeasurement()
    raw.close()
  }
}

/// The parts of a change's cost, each beside the same baseline (no targets): the store's
/// append alone, and the write path without a subscriber.
func registerWritesExperiments() {
  let directory = benchmarkDirectory("writes-x")
  let kilnFile = directory.appendingPathComponent("kiln.sqlite")
  let rawFile = directory.appendingPathComponent("raw.sqlite")
  let baseline: @Sendable (Benchmark) async throws -> Void = { benchmark in
    benchmark.stopMeasurement()
    removeDatabase(rawFile)
    let raw = RawOutbox(path: rawFile.path)
    var change = Data(repeating: 42, count: 1_024)
    benchmark.startMeasurement()
    for index in 0..<mutateCount {
      change[0] = UInt8(truncatingIfNeeded: index)
      _ = raw.append(change)
    }
    benchmark.stopMeasurement()
    raw.close()
  }
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
  } baseline: {
    try await baseline($0)
  }
  comparison(
    "Writes.mutate without a subscriber (part of Writes.mutate) vs sqlite3 insert of the same bytes", batch: mutateCount
  ) { benchmark in
    benchmark.stopMeasurement()
    removeDatabase(kilnFile)
    let store = try SQLiteOutboxStore(url: kilnFile)
    let outbox = try await Outbox.open(store, options: OutboxOptions(maxConcurrentSends: 1))
    let repository = Repository<Int, Data>()
    let writes = try await repository.writes(
      through: ParkedMutator(), outbox: outbox, channel: "notes", paramCodec: .automatic, changeCodec: .automatic)
    var change = Data(repeating: 42, count: 1_024)
    benchmark.startMeasurement()
    for index in 0..<mutateCount {
      change[0] = UInt8(truncatingIfNeeded: index)
      try await writes.mutate(0, change)
    }
    benchmark.stopMeasurement()
    await outbox.close()
    await store.close()
  } baseline: {
    try await baseline($0)
  }
}
