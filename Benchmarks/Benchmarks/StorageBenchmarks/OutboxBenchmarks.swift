import Benchmark
import CKilnSQLite
import Foundation
import KilnBenchmarkSupport
import KilnStorage

private let appendCount = 1_000
private let change = Data(repeating: 42, count: 1_024)

/// The baseline of an outbox append: the same 1 KB inserted with sqlite3 directly, one
/// transaction per insert, into a table whose row IDs are never reused, with the same
/// durability (WAL, `synchronous=NORMAL`).
final class RawOutbox: @unchecked Sendable {  // used from one benchmark task at a time
  let database: OpaquePointer
  let insert: OpaquePointer
  let delete: OpaquePointer

  init(path: String) {
    database = openRawDatabase(
      path: path, schema: "CREATE TABLE IF NOT EXISTS raw (seq INTEGER PRIMARY KEY AUTOINCREMENT, change BLOB NOT NULL)"
    )
    insert = prepareRaw("INSERT INTO raw (change) VALUES (?1)", on: database)
    delete = prepareRaw("DELETE FROM raw WHERE seq = ?1", on: database)
  }

  func append(_ bytes: Data) -> Int64 {
    sqlite3_exec(database, "BEGIN IMMEDIATE", nil, nil, nil)
    bytes.withUnsafeBytes { _ = sqlite3_bind_blob(insert, 1, $0.baseAddress, Int32($0.count), transient) }
    sqlite3_step(insert)
    sqlite3_reset(insert)
    sqlite3_exec(database, "COMMIT", nil, nil, nil)
    return sqlite3_last_insert_rowid(database)
  }

  func close() {
    sqlite3_finalize(insert)
    sqlite3_finalize(delete)
    sqlite3_close(database)
  }

  func remove(_ sequences: [Int64]) {
    sqlite3_exec(database, "BEGIN IMMEDIATE", nil, nil, nil)
    for sequence in sequences {
      sqlite3_bind_int64(delete, 1, sequence)
      sqlite3_step(delete)
      sqlite3_reset(delete)
    }
    sqlite3_exec(database, "COMMIT", nil, nil, nil)
  }
}

func registerOutboxBenchmarks() {
  let directory = benchmarkDirectory("outbox")
  for name in ["kiln.sqlite", "raw.sqlite"] {
    for suffix in ["", "-wal", "-shm"] {
      try? FileManager.default.removeItem(at: directory.appendingPathComponent(name + suffix))
    }
  }
  let store = try! SQLiteOutboxStore(url: directory.appendingPathComponent("kiln.sqlite"))
  let raw = RawOutbox(path: directory.appendingPathComponent("raw.sqlite").path)
  let scopes = (0..<16).map { Data("note/\($0)".utf8) }

  // An entry's life in the store: appended durably (one transaction each), then confirmed
  // with the others in one batched removal, which also keeps the file from growing.
  comparison("SQLiteOutboxStore append 1 KB + batched removal vs sqlite3 insert of the same bytes", batch: appendCount)
  { _ in
    var sequences: [UInt64] = []
    sequences.reserveCapacity(appendCount)
    for index in 0..<appendCount {
      let scope = scopes[index & 15]
      sequences.append(
        try await store.append(OutboxRecord(channel: "notes", scope: scope, param: scope, change: change)))
    }
    try await store.remove(sequences)
  } baseline: { _ in
    var sequences: [Int64] = []
    sequences.reserveCapacity(appendCount)
    for _ in 0..<appendCount { sequences.append(raw.append(change)) }
    raw.remove(sequences)
  }
}
