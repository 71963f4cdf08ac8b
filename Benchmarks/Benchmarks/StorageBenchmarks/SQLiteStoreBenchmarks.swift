import Benchmark
import CKilnSQLite
import Foundation
import KilnBenchmarkSupport
import KilnStorage

private let rowCount = 1_000
private let value = Data(repeating: 7, count: 100)
/// `SQLITE_TRANSIENT`: SQLite copies bound bytes (the C macro does not import).
let transient = unsafeBitCast(Int(-1), to: sqlite3_destructor_type.self)

/// Opens the database at `path` as the raw baselines use it: one connection, WAL,
/// `synchronous=NORMAL` (what Kiln's SQLite stores run by default), then runs `schema`.
func openRawDatabase(path: String, schema: String) -> OpaquePointer {
  var database: OpaquePointer?
  sqlite3_open_v2(path, &database, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
  sqlite3_exec(database!, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; \(schema)", nil, nil, nil)
  return database!
}

/// A prepared statement of `sql` on `database`.
func prepareRaw(_ sql: String, on database: OpaquePointer) -> OpaquePointer {
  var statement: OpaquePointer?
  sqlite3_prepare_v2(database, sql, -1, &statement, nil)
  return statement!
}

/// SQLite used directly: one connection, WAL, prepared statements, the same schema as
/// SQLiteStore's: its table and its partial index on `expires_at` (which lets the store sweep
/// expired rows). Without the index, the baseline left out a sixth of SQLite's own time per
/// replaced row and one of its five allocations: most of what the batched write missed by.
final class RawSQLite: @unchecked Sendable {  // used from one benchmark task at a time
  let database: OpaquePointer
  let insert: OpaquePointer
  let select: OpaquePointer

  init(path: String) {
    database = openRawDatabase(
      path: path,
      schema: """
        CREATE TABLE IF NOT EXISTS raw (key BLOB PRIMARY KEY NOT NULL, value BLOB NOT NULL, stored_at REAL NOT NULL,
          expires_at REAL) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS raw_expires_at ON raw (expires_at) WHERE expires_at IS NOT NULL;
        """)
    insert = prepareRaw(
      "INSERT OR REPLACE INTO raw (key, value, stored_at, expires_at) VALUES (?1, ?2, ?3, ?4)", on: database)
    select = prepareRaw("SELECT value, stored_at, expires_at FROM raw WHERE key = ?1", on: database)
  }

  func write(_ keys: [Data]) {
    sqlite3_exec(database, "BEGIN IMMEDIATE", nil, nil, nil)
    let now = Date().timeIntervalSinceReferenceDate
    for key in keys {
      key.withUnsafeBytes { _ = sqlite3_bind_blob(insert, 1, $0.baseAddress, Int32($0.count), transient) }
      value.withUnsafeBytes { _ = sqlite3_bind_blob(insert, 2, $0.baseAddress, Int32($0.count), transient) }
      sqlite3_bind_double(insert, 3, now)
      sqlite3_bind_null(insert, 4)
      sqlite3_step(insert)
      sqlite3_reset(insert)
    }
    sqlite3_exec(database, "COMMIT", nil, nil, nil)
  }

  func read(_ key: Data) -> Data? {
    defer { sqlite3_reset(select) }
    key.withUnsafeBytes { _ = sqlite3_bind_blob(select, 1, $0.baseAddress, Int32($0.count), transient) }
    guard sqlite3_step(select) == SQLITE_ROW else { return nil }
    let count = Int(sqlite3_column_bytes(select, 0))
    return Data(bytes: sqlite3_column_blob(select, 0), count: count)
  }
}

func registerSQLiteStoreBenchmarks() {
  let directory = benchmarkDirectory("sqlite")
  let store = try! SQLiteStore<String, Data>(url: directory.appendingPathComponent("kiln.sqlite"))
  let raw = RawSQLite(path: directory.appendingPathComponent("raw.sqlite").path)
  let keys = (0..<rowCount).map { "key-\($0)" }
  let rawKeys = keys.map { Data($0.utf8) }
  let entries = keys.map { ($0, value) }

  // Reported without a target: the price of Kiln's layer (encoding, the writer's queue,
  // the reader pool) over the C API.
  comparison("SQLiteStore batched write of 1,000 rows vs sqlite3", batch: rowCount) { _ in
    try await store.setValues(entries)
  } baseline: { _ in
    raw.write(rawKeys)
  }

  comparison(
    "SQLiteStore point read vs sqlite3", operations: .kilo,
    setUp: {
      try await store.setValues(entries)
      raw.write(rawKeys)
    },
    kiln: { benchmark in
      var index = 0
      for _ in benchmark.scaledIterations {
        blackHole(try await store.value(forKey: keys[index]))
        index = index == rowCount - 1 ? 0 : index + 1
      }
    },
    baseline: { benchmark in
      var index = 0
      for _ in benchmark.scaledIterations {
        blackHole(raw.read(rawKeys[index]))
        index = index == rowCount - 1 ? 0 : index + 1
      }
    }
  )
}
