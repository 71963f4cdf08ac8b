import CKilnSQLite
import Foundation

/// The single writing connection of a ``SQLiteStore``, on its own serial queue.
///
/// Every write takes SQLite's write lock up front (`BEGIN IMMEDIATE`), so concurrent writers
/// — other stores on the file, other processes — wait for each other up to the busy timeout
/// instead of failing half-way, and no committed write is lost.
actor SQLiteWriter {
  nonisolated let executor: DispatchQueueExecutor
  nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

  private var connection: SQLiteConnection?
  private let table: String
  private var writesSinceSweep = 0

  /// Expired rows are deleted every this many writes.
  static var sweepInterval: Int { 256 }

  init(connection: SQLiteConnection, table: String) {
    self.connection = connection
    self.table = table
    executor = DispatchQueueExecutor(label: "Kiln.SQLiteStore.writer")
  }

  private func open() throws(SQLiteStoreError) -> SQLiteConnection {
    guard let connection else { throw .closed }
    return connection
  }

  /// Inserts or replaces rows in one transaction.
  func write(_ rows: [(key: Data, value: Data)], storedAt: Double, expiresAt: Double?, now: Double)
    throws(SQLiteStoreError)
  {
    let connection = try open()
    try connection.writeTransaction { () throws(SQLiteStoreError) in
      let statement = try connection.statement(
        "INSERT OR REPLACE INTO \"\(table)\" (key, value, stored_at, expires_at) VALUES (?1, ?2, ?3, ?4)")
      defer { statement.reset() }
      for row in rows {
        try statement.bind(row.key, at: 1)
        try statement.bind(row.value, at: 2)
        try statement.bind(storedAt, at: 3)
        if let expiresAt { try statement.bind(expiresAt, at: 4) } else { try statement.bindNull(at: 4) }
        do throws(SQLiteStoreError) {
          _ = try statement.step()
        } catch .sqlite(let code, _) where code & 0xFF == SQLITE_TOOBIG {
          // Each blob fit the length limit, the whole row did not.
          throw .entryTooLarge(size: row.key.count + row.value.count, limit: connection.lengthLimit)
        }
        statement.reset()
      }
      writesSinceSweep += rows.count
      if writesSinceSweep >= Self.sweepInterval {
        writesSinceSweep = 0
        _ = try deleteExpired(connection, now: now)
      }
    }
  }

  func remove(_ key: Data) throws(SQLiteStoreError) {
    let connection = try open()
    try connection.writeTransaction { () throws(SQLiteStoreError) in
      let statement = try connection.statement("DELETE FROM \"\(table)\" WHERE key = ?1")
      defer { statement.reset() }
      try statement.bind(key, at: 1)
      _ = try statement.step()
    }
  }

  func removeAll() throws(SQLiteStoreError) {
    let connection = try open()
    try connection.writeTransaction { () throws(SQLiteStoreError) in
      try connection.execute("DELETE FROM \"\(table)\"")
    }
  }

  func removeExpired(now: Double) throws(SQLiteStoreError) -> Int {
    let connection = try open()
    return try connection.writeTransaction { () throws(SQLiteStoreError) in try deleteExpired(connection, now: now) }
  }

  private func deleteExpired(_ connection: SQLiteConnection, now: Double) throws(SQLiteStoreError) -> Int {
    let statement = try connection.statement(
      "DELETE FROM \"\(table)\" WHERE expires_at IS NOT NULL AND expires_at < ?1")
    defer { statement.reset() }
    try statement.bind(now, at: 1)
    _ = try statement.step()
    return Int(sqlite3Changes(connection))
  }

  /// Writes the WAL back into the database file and truncates it.
  ///
  /// - Throws: ``SQLiteStoreError/busy(message:)`` when readers or another writer kept it
  ///   from completing within the busy timeout.
  func checkpoint() throws(SQLiteStoreError) {
    try open().checkpoint()
  }

  func close() {
    connection = nil
  }
}
