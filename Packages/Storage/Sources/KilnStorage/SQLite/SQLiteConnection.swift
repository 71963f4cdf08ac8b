import CKilnSQLite
import Dispatch
import Foundation

/// One SQLite connection with its prepared statements.
///
/// Why `@unchecked Sendable` is sound: a connection is opened with `SQLITE_OPEN_NOMUTEX`
/// and used by one thread at a time — the writer's lives on the writer actor, each reader
/// is either idle in the pool (touched by nobody) or checked out under the pool's lock by
/// exactly one caller until it is returned. Moving it between threads between uses is
/// allowed by SQLite in that mode.
final class SQLiteConnection: @unchecked Sendable {
  let handle: OpaquePointer
  let path: String
  private var statements: [String: OpaquePointer] = [:]
  /// The statement ``statement(_:)`` returned last, one of `statements`.
  private var lastStatement: (sql: String, handle: OpaquePointer)?

  init(path: String, readOnly: Bool, busyTimeout: Duration) throws(SQLiteStoreError) {
    var handle: OpaquePointer?
    let flags =
      (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
    let code = sqlite3_open_v2(path, &handle, flags, nil)
    guard code == SQLITE_OK, let handle else {
      let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
      if let handle { sqlite3_close_v2(handle) }
      throw .openFailed(path: path, code: code, message: message)
    }
    self.handle = handle
    self.path = path
    sqlite3_extended_result_codes(handle, 1)
    let milliseconds =
      busyTimeout.components.seconds * 1_000 + busyTimeout.components.attoseconds / 1_000_000_000_000_000
    sqlite3_busy_timeout(handle, Int32(clamping: milliseconds))
  }

  /// Opens the writing connection of a store: WAL mode (retried while another opener holds
  /// the lock) and `synchronous` as `durability` asks.
  static func writer(path: String, busyTimeout: Duration, durability: Durability) throws(SQLiteStoreError)
    -> SQLiteConnection
  {
    let connection = try SQLiteConnection(path: path, readOnly: false, busyTimeout: busyTimeout)
    try connection.enableWAL(retryingWhileBusyFor: busyTimeout)
    try connection.execute("PRAGMA synchronous = \(durability == .powerLoss ? "FULL" : "NORMAL")")
    return connection
  }

  deinit {
    for statement in statements.values { sqlite3_finalize(statement) }
    sqlite3_close_v2(handle)
  }

  /// Runs SQL without results (pragmas, schema, transaction control).
  func execute(_ sql: String) throws(SQLiteStoreError) {
    var message: UnsafeMutablePointer<CChar>?
    let code = sqlite3_exec(handle, sql, nil, nil, &message)
    if code != SQLITE_OK {
      let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
      sqlite3_free(message)
      throw error(code: code, message: text)
    }
  }

  /// Switches the database to WAL mode, retrying while SQLite answers `SQLITE_BUSY`
  /// *without* calling the busy handler, until `timeout` has passed.
  ///
  /// Switching a database to WAL needs an exclusive lock, and SQLite answers a lock upgrade
  /// that could deadlock with an immediate `SQLITE_BUSY` instead of waiting: two processes
  /// opening a new database at once would otherwise see "database is locked" at random.
  ///
  /// - Throws: ``SQLiteStoreError/walUnavailable(path:journalMode:)`` when SQLite keeps
  ///   another journal mode (it answers the mode in force rather than failing), or the
  ///   error of the pragma.
  func enableWAL(retryingWhileBusyFor timeout: Duration) throws(SQLiteStoreError) {
    let mode = try retryingWhileBusy(for: timeout) { () throws(SQLiteStoreError) in
      try queryText("PRAGMA journal_mode = WAL")
    }
    guard let mode, mode.lowercased() == "wal" else { throw .walUnavailable(path: path, journalMode: mode ?? "") }
  }

  /// Copies the write-ahead log into the database and truncates it, waiting for readers
  /// and writers up to the busy timeout.
  ///
  /// - Throws: ``SQLiteStoreError/busy(message:)`` when a reader or writer kept the
  ///   checkpoint from completing (`PRAGMA wal_checkpoint` would report that only in its
  ///   result row).
  func checkpoint() throws(SQLiteStoreError) {
    let code = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_TRUNCATE, nil, nil)
    if code != SQLITE_OK { throw lastError(code) }
  }

  /// Runs `body` again while it fails with ``SQLiteStoreError/busy(message:)``, until
  /// `timeout` has passed.
  func retryingWhileBusy<Result>(
    for timeout: Duration,
    _ body: () throws(SQLiteStoreError) -> Result
  ) throws(SQLiteStoreError) -> Result {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    var pause: UInt32 = 1_000  // microseconds, doubling up to 50 ms
    while true {
      do {
        return try body()
      } catch .busy(let message) {
        guard ContinuousClock.now < deadline else { throw .busy(message: message) }
        usleep(pause)
        pause = min(pause * 2, 50_000)
      }
    }
  }

  /// The first column of the first row of `sql` as text; `nil` when it answers no row or
  /// `NULL`. The statement is not cached.
  func queryText(_ sql: String) throws(SQLiteStoreError) -> String? {
    var statement: OpaquePointer?
    let code = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
    guard code == SQLITE_OK, let statement else { throw lastError(code) }
    defer { sqlite3_finalize(statement) }
    switch sqlite3_step(statement) {
    case SQLITE_ROW:
      return sqlite3_column_text(statement, 0).map { String(cString: $0) }
    case SQLITE_DONE:
      return nil
    case let failure:
      throw lastError(failure)
    }
  }

  /// A cached prepared statement for `sql`, reset and cleared of bindings.
  func statement(_ sql: String) throws(SQLiteStoreError) -> SQLiteStatement {
    // The last statement first: a store asks again and again for the same SQL, held in one
    // of its properties, and comparing a string with itself is a pointer comparison where
    // the dictionary would hash the whole text (a tenth of a point read's own cost).
    if let last = lastStatement, last.sql == sql {
      return SQLiteStatement(handle: last.handle, connection: self)
    }
    if let cached = statements[sql] {
      lastStatement = (sql, cached)
      return SQLiteStatement(handle: cached, connection: self)
    }
    var statement: OpaquePointer?
    let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
    guard code == SQLITE_OK, let statement else { throw lastError(code) }
    statements[sql] = statement
    lastStatement = (sql, statement)
    return SQLiteStatement(handle: statement, connection: self)
  }

  /// The row ID of the last row this connection inserted.
  var lastInsertRowID: Int64 {
    sqlite3_last_insert_rowid(handle)
  }

  /// The number of rows the last statement changed.
  var changes: Int {
    Int(sqlite3_changes(handle))
  }

  /// The largest string or blob this connection accepts, in bytes (`SQLITE_LIMIT_LENGTH`).
  var lengthLimit: Int {
    Int(sqlite3_limit(handle, SQLITE_LIMIT_LENGTH, -1))
  }

  func lastError(_ code: Int32) -> SQLiteStoreError {
    error(code: code, message: String(cString: sqlite3_errmsg(handle)))
  }

  func error(code: Int32, message: String) -> SQLiteStoreError {
    switch code & 0xFF {
    case SQLITE_BUSY, SQLITE_LOCKED: .busy(message: message)
    case SQLITE_NOTADB, SQLITE_CORRUPT: .notADatabase(path: path)
    default: .sqlite(code: code, message: message)
    }
  }

  /// Runs `body` in a `BEGIN IMMEDIATE` transaction (the write lock is taken up front, so
  /// the busy timeout applies), committing on success and rolling back on error.
  ///
  /// `BEGIN IMMEDIATE` and `COMMIT` run as cached prepared statements: `sqlite3_exec` parses
  /// each anew, which was a sixteenth of an outbox append (measured).
  func writeTransaction<Result>(_ body: () throws(SQLiteStoreError) -> Result) throws(SQLiteStoreError) -> Result {
    try step(cached: "BEGIN IMMEDIATE")
    do {
      let result = try body()
      try step(cached: "COMMIT")
      return result
    } catch {
      try? execute("ROLLBACK")
      throw error
    }
  }

  /// Runs the statement `sql`, which returns no rows, from the statement cache.
  private func step(cached sql: String) throws(SQLiteStoreError) {
    let statement = try statement(sql)
    defer { statement.reset() }
    _ = try statement.step()
  }
}

/// The number of rows the last statement changed.
func sqlite3Changes(_ connection: SQLiteConnection) -> Int32 {
  sqlite3_changes(connection.handle)
}
