public import Foundation
import _KilnSynchronization

/// A `KeyValueStore` in an SQLite database file, on the system's SQLite library.
///
/// ```swift
/// let store = try SQLiteStore<String, Article>(url: supportURL.appending(path: "cache.sqlite"))
/// try await store.setValue(article, forKey: "article/7", expiresAt: .now.addingTimeInterval(3_600))
/// let cached = try await store.value(forKey: "article/7")
/// try await store.setValues(articles.map { ("article/\($0.id)", $0) })   // one transaction
/// ```
///
/// Values are stored as blobs (through a ``StoreCodec``) with their stored-at and expiry
/// dates in one table of the file. The database runs in WAL mode: reads never wait for
/// writes, each write is a transaction that a crash leaves either complete or absent, and
/// several stores — in one process or in several — can share a file: writers wait for each
/// other up to ``busyTimeout`` and no committed write is lost.
///
/// Reads use a small pool of read-only connections on the calling thread; writes go through
/// one connection on a dedicated serial queue. Statements are prepared once per connection.
/// Expired rows are never returned and are deleted every few hundred writes, or by
/// ``removeExpired()``.
///
/// - Important: No package is needed: the system SQLite (part of Apple's SDKs; the
///   `libsqlite3-dev` package on Debian and Ubuntu).
public final class SQLiteStore<Key: Hashable & Sendable, Value: Sendable>: KeyValueStore, Sendable {
  /// The database file.
  public let url: URL

  /// The table holding this store's entries.
  public let table: String
  /// The point read's SQL, made once: interpolating it on every read cost an allocation and
  /// a tenth of a read (profiled in StorageBenchmarks).
  private let selectEntrySQL: String

  /// How long an entry stored without an explicit expiry lives; `nil` for until removed.
  public let entryLifetime: Duration?

  /// How long a write waits for another connection's lock before failing with
  /// ``SQLiteStoreError/busy(message:)``.
  public let busyTimeout: Duration

  private let path: String
  private let writer: SQLiteWriter
  /// What the store did: see `statistics`.
  let counters = StoreCounters()
  private let readers = KilnMutex(ReaderPool())
  private let keyCodec: StoreCodec<Key>
  private let valueCodec: StoreCodec<Value>
  private let now: @Sendable () -> Date

  private struct ReaderPool {
    var idle: [SQLiteConnection] = []
    var isClosed = false
  }

  /// Idle read connections kept open.
  private static var maximumIdleReaders: Int { 4 }

  /// Opens (creating if needed) the database at `url` and its table.
  ///
  /// - Parameters:
  ///   - url: The database file; its directory must exist.
  ///   - table: The table of this store; several stores can share a file with different
  ///     tables. `kiln_cache` by default.
  ///   - entryLifetime: How long entries stored without an explicit expiry live; `nil` (the
  ///     default) keeps them until removed.
  ///   - durability: ``Durability/processCrash`` (the default) runs WAL with
  ///     `synchronous=NORMAL`: a committed write survives the process dying. With
  ///     ``Durability/powerLoss`` every commit is synced to disk (`synchronous=FULL`).
  ///   - busyTimeout: How long a write waits for another writer; five seconds by default.
  ///   - keyCodec: How keys become blobs.
  ///   - valueCodec: How values become blobs.
  ///   - now: The wall clock that stamps and expires entries.
  /// - Throws: ``SQLiteStoreError/invalidTableName(_:)``, ``SQLiteStoreError/openFailed(path:code:message:)``,
  ///   ``SQLiteStoreError/notADatabase(path:)`` (the file is left as it is),
  ///   ``SQLiteStoreError/walUnavailable(path:journalMode:)`` when the database cannot run
  ///   in WAL mode, or ``SQLiteStoreError/busy(message:)`` when another process holds the
  ///   file locked.
  public init(
    url: URL,
    table: String = "kiln_cache",
    entryLifetime: Duration? = nil,
    durability: Durability = .processCrash,
    busyTimeout: Duration = .seconds(5),
    keyCodec: StoreCodec<Key>,
    valueCodec: StoreCodec<Value>,
    now: @escaping @Sendable () -> Date = Date.init
  ) throws(SQLiteStoreError) {
    guard isPlainSQLIdentifier(table, maximumLength: 64) else { throw .invalidTableName(table) }
    EntryLifetime.validate(entryLifetime, of: "SQLiteStore")
    let path = url.standardizedFileURL.path
    let connection = try SQLiteConnection.writer(path: path, busyTimeout: busyTimeout, durability: durability)
    try connection.writeTransaction { () throws(SQLiteStoreError) in
      try connection.execute(
        """
        CREATE TABLE IF NOT EXISTS "\(table)" (
          key BLOB PRIMARY KEY NOT NULL, value BLOB NOT NULL, stored_at REAL NOT NULL, expires_at REAL
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS "\(table)_expires_at" ON "\(table)" (expires_at) WHERE expires_at IS NOT NULL;
        """)
    }
    self.url = url
    self.path = path
    self.table = table
    selectEntrySQL = "SELECT value, stored_at, expires_at FROM \"\(table)\" WHERE key = ?1"
    self.entryLifetime = entryLifetime
    self.busyTimeout = busyTimeout
    self.keyCodec = keyCodec
    self.valueCodec = valueCodec
    self.now = now
    writer = SQLiteWriter(connection: connection, table: table)
  }

  // MARK: - Reading

  /// The entry stored under `key`, or `nil` when there is none, it has expired, or its
  /// value no longer decodes.
  ///
  /// - Throws: ``SQLiteStoreError`` when the database cannot be read, or ``SQLiteStoreError/closed``.
  public func entry(forKey key: Key) async throws(SQLiteStoreError) -> CacheEntry<Value>? {
    let keyBytes = try encode(key)
    let row: (value: Data, storedAt: Double, expiresAt: Double?)? = try withReader {
      (connection) throws(SQLiteStoreError) in
      let statement = try connection.statement(selectEntrySQL)
      defer { statement.reset() }
      try statement.bind(keyBytes, at: 1)
      guard try statement.step() else { return nil }
      return (statement.data(at: 0), statement.double(at: 1) ?? 0, statement.double(at: 2))
    }
    guard let row else {
      counters.add(.misses)
      return nil
    }
    if let expiresAt = row.expiresAt, now().timeIntervalSinceReferenceDate > expiresAt {
      counters.add(.misses)
      counters.add(.expiredReads)
      return nil
    }
    guard let value = try? valueCodec.decode(row.value) else {
      counters.add(.misses)
      counters.add(.unreadableEntries)
      return nil
    }
    counters.add(.hits)
    return CacheEntry(
      value: value, storedAt: Date(timeIntervalSinceReferenceDate: row.storedAt),
      expiresAt: row.expiresAt.map(Date.init(timeIntervalSinceReferenceDate:)))
  }

  /// The number of entries that have not expired.
  public var count: Int {
    get async throws(SQLiteStoreError) {
      let instant = now().timeIntervalSinceReferenceDate
      return try withReader { (connection) throws(SQLiteStoreError) in
        let statement = try connection.statement(
          "SELECT COUNT(*) FROM \"\(table)\" WHERE expires_at IS NULL OR expires_at >= ?1")
        defer { statement.reset() }
        try statement.bind(instant, at: 1)
        _ = try statement.step()
        return statement.int(at: 0)
      }
    }
  }

  // MARK: - Writing

  /// Stores `value` under `key` in its own transaction.
  ///
  /// - Parameters:
  ///   - value: The value to store.
  ///   - key: Its key.
  ///   - expiresAt: When it expires; `nil` applies ``entryLifetime``.
  /// - Throws: `CancellationError` when the task is already cancelled (nothing is written);
  ///   ``SQLiteStoreError/entryTooLarge(size:limit:)`` past SQLite's length limit; other
  ///   ``SQLiteStoreError``s.
  public func setValue(_ value: Value, forKey key: Key, expiresAt: Date?) async throws {
    try await setValues([(key, value)], expiresAt: expiresAt)
  }

  /// Stores many values in one transaction: all of them or, on error, none.
  ///
  /// ```swift
  /// try await store.setValues(articles.map { ("article/\($0.id)", $0) })
  /// ```
  ///
  /// - Parameters:
  ///   - entries: The keys and values; a key given twice keeps its last value.
  ///   - expiresAt: When they expire; `nil` applies ``entryLifetime``.
  /// - Throws: `CancellationError` when the task is already cancelled (nothing is written);
  ///   ``SQLiteStoreError/entryTooLarge(size:limit:)`` past SQLite's length limit; other
  ///   ``SQLiteStoreError``s.
  public func setValues(_ entries: some Sequence<(Key, Value)>, expiresAt: Date? = nil) async throws {
    try Task.checkCancellation()
    var rows: [(key: Data, value: Data)] = []
    rows.reserveCapacity(entries.underestimatedCount)
    func append(_ key: Key, _ value: Value) throws {
      let keyBytes = try encode(key)
      let valueBytes: Data
      do { valueBytes = try valueCodec.encode(value) } catch { throw SQLiteStoreError.valueEncodingFailed(error) }
      rows.append((keyBytes, valueBytes))
    }
    // Through a buffer when the entries are contiguous (an array): iterating a generic
    // sequence unspecialised reads each element through a coroutine that allocates its frame
    // (one allocation per row, in perf).
    let wasContiguous: Void? = try entries.withContiguousStorageIfAvailable { buffer in
      for index in buffer.indices { try append(buffer[index].0, buffer[index].1) }
    }
    if wasContiguous == nil {
      for (key, value) in entries { try append(key, value) }
    }
    guard !rows.isEmpty else { return }
    let stamp = now()
    let expiry = EntryLifetime.expiry(expiresAt, storedAt: stamp, lifetime: entryLifetime)
    try await writer.write(
      rows, storedAt: stamp.timeIntervalSinceReferenceDate, expiresAt: expiry?.timeIntervalSinceReferenceDate,
      now: stamp.timeIntervalSinceReferenceDate)
    counters.add(.writes, rows.count)
    counters.add(.writtenBytes, rows.reduce(0) { $0 + $1.key.count + $1.value.count })
  }

  /// Stores every entry of a dictionary in one transaction: all of them or, on error, none.
  ///
  /// - Parameters:
  ///   - entries: The keys and values.
  ///   - expiresAt: When they expire; `nil` applies ``entryLifetime``.
  /// - Throws: `CancellationError` when the task is already cancelled; ``SQLiteStoreError``.
  public func setValues(_ entries: [Key: Value], expiresAt: Date? = nil) async throws {
    try await setValues(entries.lazy.map { ($0.key, $0.value) }, expiresAt: expiresAt)
  }

  /// Removes the entry stored under `key`, if any.
  ///
  /// - Throws: ``SQLiteStoreError``.
  public func removeValue(forKey key: Key) async throws(SQLiteStoreError) {
    try await writer.remove(try encode(key))
    counters.add(.removals)
  }

  /// Removes every entry of this store's table.
  ///
  /// - Throws: ``SQLiteStoreError``.
  public func removeAll() async throws(SQLiteStoreError) {
    try await writer.removeAll()
  }

  /// Deletes every expired row now.
  ///
  /// - Returns: The number of rows deleted.
  /// - Throws: ``SQLiteStoreError``.
  @discardableResult
  public func removeExpired() async throws(SQLiteStoreError) -> Int {
    let removed = try await writer.removeExpired(now: now().timeIntervalSinceReferenceDate)
    counters.add(.expirations, removed)
    return removed
  }

  /// Copies the write-ahead log into the database file and truncates the log.
  ///
  /// SQLite does this on its own as the log grows; call it to shrink the files, for
  /// example before backing the database up. It waits up to ``busyTimeout`` for readers
  /// of older data (in any process) to finish.
  ///
  /// - Throws: ``SQLiteStoreError/busy(message:)`` when a reader or another writer kept the
  ///   checkpoint from completing (the log is then not truncated); other
  ///   ``SQLiteStoreError``s.
  public func checkpoint() async throws(SQLiteStoreError) {
    try await writer.checkpoint()
  }

  /// Closes the store's connections; every later call throws ``SQLiteStoreError/closed``.
  ///
  /// Closing is optional: connections also close when the store is released.
  public func close() async {
    let idle = readers.withLock { pool in
      pool.isClosed = true
      let idle = pool.idle
      pool.idle = []
      return idle
    }
    withExtendedLifetime(idle) {}
    await writer.close()
  }

  // MARK: - Internal

  private func encode(_ key: Key) throws(SQLiteStoreError) -> Data {
    do { return try keyCodec.encode(key) } catch { throw .keyEncodingFailed(error) }
  }

  /// Runs `body` with a read connection checked out of the pool (opened if none is idle).
  @inline(__always)
  private func withReader<Result>(
    _ body: (SQLiteConnection) throws(SQLiteStoreError) -> Result
  ) throws(SQLiteStoreError) -> Result {
    // `defer` rather than a `Swift.Result` around the body: a generic `Result` here cost a
    // metadata lookup on every read.
    let connection = try checkOutReader()
    defer { checkIn(connection) }
    return try body(connection)
  }

  private func checkOutReader() throws(SQLiteStoreError) -> SQLiteConnection {
    let checkedOut: SQLiteConnection?? = readers.withLock { pool in
      pool.isClosed ? nil : .some(pool.idle.popLast())
    }
    guard let checkedOut else { throw .closed }
    if let checkedOut { return checkedOut }
    return try SQLiteConnection(path: path, readOnly: true, busyTimeout: busyTimeout)
  }

  private func checkIn(_ connection: SQLiteConnection) {
    let surplus: SQLiteConnection? = readers.withLock { pool in
      guard !pool.isClosed, pool.idle.count < Self.maximumIdleReaders else { return connection }
      pool.idle.append(connection)
      return nil
    }
    withExtendedLifetime(surplus) {}
  }
}

extension SQLiteStore where Key: Codable, Value: Codable {
  /// Opens (creating if needed) the database at `url`, coding keys and values with
  /// ``StoreCodec/automatic``.
  ///
  /// ```swift
  /// let store = try SQLiteStore<String, Article>(url: folder.appending(path: "kiln.sqlite"))
  /// ```
  ///
  /// - Parameters:
  ///   - url: The database file; its directory must exist.
  ///   - table: The table of this store; `kiln_cache` by default.
  ///   - entryLifetime: How long entries stored without an explicit expiry live.
  ///   - durability: What a committed write survives.
  ///   - busyTimeout: How long a write waits for another writer.
  ///   - now: The wall clock that stamps and expires entries.
  /// - Throws: ``SQLiteStoreError``.
  public convenience init(
    url: URL,
    table: String = "kiln_cache",
    entryLifetime: Duration? = nil,
    durability: Durability = .processCrash,
    busyTimeout: Duration = .seconds(5),
    now: @escaping @Sendable () -> Date = Date.init
  ) throws(SQLiteStoreError) {
    try self.init(
      url: url, table: table, entryLifetime: entryLifetime, durability: durability, busyTimeout: busyTimeout,
      keyCodec: .automatic, valueCodec: .automatic, now: now)
  }
}
