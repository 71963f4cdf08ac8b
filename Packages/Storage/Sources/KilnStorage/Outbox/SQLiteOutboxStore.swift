import CKilnSQLite
public import Foundation
import _KilnSynchronization

/// An ``OutboxStore`` in an SQLite database file: writes waiting to be sent survive the
/// process being killed at any instant.
///
/// ```swift
/// let outbox = try SQLiteOutboxStore(url: support.appending(path: "kiln.sqlite"))
/// let sequence = try await outbox.append(record)   // durable when it returns
/// for load in try await outbox.loadAll() { … }     // after a restart: every entry, in order
/// ```
///
/// Each call is one transaction on the store's one connection, run on the calling thread
/// under a lock: an append is a single `INSERT` that a kill leaves either committed or
/// absent, and costs no thread hop (a hop to a queue of its own cost more than the insert).
/// The database runs in WAL mode, so the file can be shared with an ``SQLiteStore`` (another
/// table) and with other processes; while another process writes, a call waits for it on
/// its thread, up to ``busyTimeout``.
///
/// Every record is kept in a checksummed envelope. SQLite checks the structure of its pages
/// but not the bytes in them, so without it a byte flipped on disk would be sent as a
/// different write; with it, ``loadAll()`` reports the entry as ``OutboxLoad/damaged(_:)``
/// and ``quarantine(_:reason:)`` moves it to a table of its own (`<table>_quarantine`).
///
/// An append of a record whose idempotency key is stored returns its entry (or throws
/// ``OutboxStoreError/keyConflict(_:)``) as the protocol says, for the entries this store
/// instance has loaded or written: keys are indexed in memory, not in the table, where a
/// unique index cost every append a second page written. Keys are random, so only a caller
/// that appends one record through two instances (or processes) at once could store it twice.
///
/// Calls are not cancellable: each is one short transaction, which a cancelled task still
/// completes (a write the user made is not dropped because its view went away).
///
/// A full disk, or a database grown to `maximumBytes`, fails an append with
/// ``OutboxStoreError/storageFull`` and writes nothing.
///
/// - Important: No package is needed: the system SQLite (part of Apple's SDKs; the
///   `libsqlite3-dev` package on Debian and Ubuntu).
public final class SQLiteOutboxStore: OutboxStore, Sendable {
  /// The database file.
  public let url: URL

  /// The table of the entries; quarantined ones are in `<table>_quarantine`.
  public let table: String

  /// How long a write waits for another connection's lock before failing.
  public let busyTimeout: Duration

  /// The connection (`nil` once closed) and the keys of the entries. Each call holds the
  /// lock for its transaction.
  private let state: KilnMutex<State>
  private let now: @Sendable () -> Date

  private struct State {
    var connection: SQLiteConnection?
    var keys: KeyIndex
  }

  /// The idempotency key of every entry this store knows, both ways: what makes an append
  /// of a stored record return its entry, without a unique index in the table (which
  /// cost every append a second page written to the log, 0.3 times an insert).
  struct KeyIndex {
    private var sequences: [IdempotencyKey: UInt64] = [:]
    private var keys: [UInt64: IdempotencyKey] = [:]

    subscript(key: IdempotencyKey) -> UInt64? { sequences[key] }

    mutating func insert(_ key: IdempotencyKey, at sequence: UInt64) {
      remove(sequence)
      sequences[key] = sequence
      keys[sequence] = key
    }

    mutating func remove(_ sequence: UInt64) {
      if let key = keys.removeValue(forKey: sequence), sequences[key] == sequence { sequences[key] = nil }
    }
  }

  /// Opens (creating if needed) the outbox at `url`.
  ///
  /// - Parameters:
  ///   - url: The database file; its directory must exist. It may be the file of an
  ///     ``SQLiteStore``.
  ///   - table: The entries' table; `kiln_outbox` by default.
  ///   - durability: ``Durability/processCrash`` (the default): a returned append survives
  ///     the process dying (`synchronous=NORMAL`). ``Durability/powerLoss`` syncs every
  ///     commit to the disk (`synchronous=FULL`).
  ///   - maximumBytes: The size the database file may reach, beyond which appends throw
  ///     ``OutboxStoreError/storageFull``; `nil` (the default) for no limit but the disk's.
  ///     Rounded down to whole pages.
  ///   - busyTimeout: How long a write waits for another writer; five seconds by default.
  ///   - now: The wall clock that dates quarantines.
  /// - Throws: ``SQLiteStoreError/invalidTableName(_:)``, ``SQLiteStoreError/openFailed(path:code:message:)``,
  ///   ``SQLiteStoreError/notADatabase(path:)`` (the file is left as it is),
  ///   ``SQLiteStoreError/walUnavailable(path:journalMode:)``, or ``SQLiteStoreError/busy(message:)``.
  public init(
    url: URL,
    table: String = "kiln_outbox",
    durability: Durability = .processCrash,
    maximumBytes: Int? = nil,
    busyTimeout: Duration = .seconds(5),
    now: @escaping @Sendable () -> Date = Date.init
  ) throws(SQLiteStoreError) {
    // The quarantine table's name must be an identifier too.
    guard isPlainSQLIdentifier(table, maximumLength: 53) else { throw .invalidTableName(table) }
    let connection = try SQLiteConnection.writer(
      path: url.standardizedFileURL.path, busyTimeout: busyTimeout, durability: durability)
    if let maximumBytes {
      precondition(maximumBytes > 0, "SQLiteOutboxStore: maximumBytes must be positive")
      let pageSize = max(Int(try connection.queryText("PRAGMA page_size") ?? "") ?? 4_096, 512)
      try connection.execute("PRAGMA max_page_count = \(max(maximumBytes / pageSize, 1))")
    }
    try connection.writeTransaction { () throws(SQLiteStoreError) in
      try connection.execute(
        """
        CREATE TABLE IF NOT EXISTS "\(table)" (
          seq INTEGER PRIMARY KEY AUTOINCREMENT, channel TEXT NOT NULL, scope BLOB NOT NULL,
          param BLOB NOT NULL, idem_key BLOB NOT NULL, record BLOB NOT NULL,
          attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT
        );
        CREATE TABLE IF NOT EXISTS "\(table)_quarantine" (
          seq INTEGER NOT NULL, channel TEXT, param BLOB, record BLOB NOT NULL, reason TEXT NOT NULL,
          quarantined_at REAL NOT NULL
        );
        """)
    }
    self.url = url
    self.table = table
    self.busyTimeout = busyTimeout
    self.now = now
    var keys = KeyIndex()
    let select = try connection.statement("SELECT seq, idem_key FROM \"\(table)\"")
    defer { select.reset() }
    while try select.step() {
      if let key = IdempotencyKey(bytes: select.data(at: 1)) {
        keys.insert(key, at: UInt64(bitPattern: select.int64(at: 0)))
      }
    }
    self.state = KilnMutex(State(connection: connection, keys: keys))
  }

  // MARK: - Writing

  public func append(_ record: OutboxRecord) async throws(OutboxStoreError) -> UInt64 {
    try appendWithoutSuspending(record)
  }

  /// ``append(_:)`` on the caller's thread, for a caller that must not suspend between
  /// choosing to append and learning the sequence (KilnRepository's `Outbox`, an actor
  /// that would otherwise hop off and back for each append).
  package func appendWithoutSuspending(_ record: OutboxRecord) throws(OutboxStoreError) -> UInt64 {
    let envelope = try OutboxEnvelope.encode(record)
    return try locked { connection, keys throws(OutboxStoreError) in
      if let stored = keys[record.idempotencyKey] {
        // The key is stored: the same write appended again (a retry after an unknown
        // outcome) returns its entry; another write with the key is a conflict.
        if let existing = try entry(stored, on: connection) {
          guard existing.record == record else { throw .keyConflict(record.idempotencyKey) }
          return stored
        }
        keys.remove(stored)  // removed by another process, or damaged: append it anew
      }
      let sequence = try Self.mapped { () throws(SQLiteStoreError) -> UInt64 in
        try connection.writeTransaction { () throws(SQLiteStoreError) -> UInt64 in
          let insert = try connection.statement(
            "INSERT INTO \"\(table)\" (channel, scope, param, idem_key, record) VALUES (?1, ?2, ?3, ?4, ?5)")
          defer { insert.reset() }
          try bind(record, envelope: envelope, to: insert)
          _ = try insert.step()
          return UInt64(connection.lastInsertRowID)
        }
      }
      keys.insert(record.idempotencyKey, at: sequence)
      return sequence
    }
  }

  public func replace(_ sequence: UInt64, with record: OutboxRecord) async throws(OutboxStoreError) {
    let envelope = try OutboxEnvelope.encode(record)
    try locked { connection, keys throws(OutboxStoreError) in
      if let other = keys[record.idempotencyKey], other != sequence, try entry(other, on: connection) != nil {
        throw .keyConflict(record.idempotencyKey)
      }
      let replaced = try Self.mapped { () throws(SQLiteStoreError) -> Bool in
        try connection.writeTransaction { () throws(SQLiteStoreError) -> Bool in
          let update = try connection.statement(
            """
            UPDATE "\(table)" SET channel = ?1, scope = ?2, param = ?3, idem_key = ?4, record = ?5, attempts = 0,
            last_error = NULL WHERE seq = ?6
            """)
          defer { update.reset() }
          try bind(record, envelope: envelope, to: update)
          try update.bind(Int64(bitPattern: sequence), at: 6)
          _ = try update.step()
          return connection.changes == 1
        }
      }
      guard replaced else { throw .notFound(sequence: sequence) }
      keys.insert(record.idempotencyKey, at: sequence)
    }
  }

  public func remove(_ sequences: [UInt64]) async throws(OutboxStoreError) {
    guard !sequences.isEmpty else { return }
    try locked { connection, keys throws(OutboxStoreError) in
      try Self.mapped { () throws(SQLiteStoreError) in
        try connection.writeTransaction { () throws(SQLiteStoreError) in
          for sequence in sequences { try delete(sequence, on: connection) }
        }
      }
      for sequence in sequences { keys.remove(sequence) }
    }
  }

  public func recordFailure(_ sequence: UInt64, attempts: Int, error message: String) async throws(OutboxStoreError) {
    let updated = try locked { connection, _ throws(OutboxStoreError) -> Bool in
      try Self.mapped { () throws(SQLiteStoreError) -> Bool in
        try connection.writeTransaction { () throws(SQLiteStoreError) -> Bool in
          let update = try connection.statement(
            "UPDATE \"\(table)\" SET attempts = ?1, last_error = ?2 WHERE seq = ?3")
          defer { update.reset() }
          try update.bind(Int64(attempts), at: 1)
          try update.bind(text: message, at: 2)
          try update.bind(Int64(bitPattern: sequence), at: 3)
          _ = try update.step()
          return connection.changes == 1
        }
      }
    }
    guard updated else { throw .notFound(sequence: sequence) }
  }

  public func quarantine(_ sequence: UInt64, reason: String) async throws(OutboxStoreError) {
    try locked { connection, keys throws(OutboxStoreError) in
      let moved = try Self.mapped { () throws(SQLiteStoreError) -> Bool in
        try connection.writeTransaction { () throws(SQLiteStoreError) -> Bool in
          let copy = try connection.statement(
            """
            INSERT INTO "\(table)_quarantine" (seq, channel, param, record, reason, quarantined_at)
            SELECT seq, channel, param, record, ?1, ?2 FROM "\(table)" WHERE seq = ?3
            """)
          defer { copy.reset() }
          try copy.bind(text: reason, at: 1)
          try copy.bind(now().timeIntervalSinceReferenceDate, at: 2)
          try copy.bind(Int64(bitPattern: sequence), at: 3)
          _ = try copy.step()
          guard connection.changes == 1 else { return false }
          try delete(sequence, on: connection)
          return true
        }
      }
      guard moved else { throw .notFound(sequence: sequence) }
      keys.remove(sequence)
    }
  }

  // MARK: - Reading

  public func loadAll() async throws(OutboxStoreError) -> [OutboxLoad] {
    try locked { connection, _ throws(OutboxStoreError) in
      try Self.mapped { () throws(SQLiteStoreError) -> [OutboxLoad] in
        let select = try connection.statement("SELECT \(Self.entryColumns) FROM \"\(table)\" ORDER BY seq")
        defer { select.reset() }
        var loads: [OutboxLoad] = []
        while try select.step() { loads.append(Self.load(select)) }
        return loads
      }
    }
  }

  public func quarantined() async throws(OutboxStoreError) -> [OutboxQuarantined] {
    try locked { connection, _ throws(OutboxStoreError) in
      try Self.mapped { () throws(SQLiteStoreError) -> [OutboxQuarantined] in
        let select = try connection.statement(
          """
          SELECT seq, channel, param, record, reason, quarantined_at FROM "\(table)_quarantine" ORDER BY rowid
          """)
        defer { select.reset() }
        var entries: [OutboxQuarantined] = []
        while try select.step() {
          entries.append(
            OutboxQuarantined(
              sequence: UInt64(bitPattern: select.int64(at: 0)), channel: select.text(at: 1),
              param: select.isNull(at: 2) ? nil : select.data(at: 2), storedBytes: select.data(at: 3),
              reason: select.text(at: 4) ?? "",
              quarantinedAt: Date(timeIntervalSinceReferenceDate: select.double(at: 5) ?? 0)))
        }
        return entries
      }
    }
  }

  /// Copies the write-ahead log into the database file and truncates it (as
  /// ``SQLiteStore/checkpoint()``).
  ///
  /// - Throws: ``OutboxStoreError/failed(_:)`` with ``SQLiteStoreError/busy(message:)`` when
  ///   readers or another writer kept it from completing.
  public func checkpoint() async throws(OutboxStoreError) {
    try locked { connection, _ throws(OutboxStoreError) in
      try Self.mapped { () throws(SQLiteStoreError) in try connection.checkpoint() }
    }
  }

  /// Closes the store's connection; every later call throws ``OutboxStoreError/closed``.
  /// Closing is optional: the connection also closes when the store is released.
  public func close() async {
    let closed = state.withLock { state in
      defer { state.connection = nil }
      return state.connection
    }
    withExtendedLifetime(closed) {}
  }

  // MARK: - Internal

  /// Runs `body` with the connection, under its lock, on the calling thread.
  private func locked<Result>(
    _ body: (SQLiteConnection, inout KeyIndex) throws(OutboxStoreError) -> Result
  ) throws(OutboxStoreError) -> Result {
    try state.withLock { (state) throws(OutboxStoreError) -> Result in
      guard let connection = state.connection else { throw .closed }
      return try body(connection, &state.keys)
    }
  }

  private func bind(_ record: OutboxRecord, envelope: Data, to statement: SQLiteStatement) throws(SQLiteStoreError) {
    try statement.bind(text: record.channel, at: 1)
    try statement.bind(record.scope, at: 2)
    try statement.bind(record.param, at: 3)
    try statement.bind(record.idempotencyKey.bytes, at: 4)
    try statement.bind(envelope, at: 5)
  }

  /// Deletes entry `sequence`, inside the caller's transaction.
  private func delete(_ sequence: UInt64, on connection: SQLiteConnection) throws(SQLiteStoreError) {
    let delete = try connection.statement("DELETE FROM \"\(table)\" WHERE seq = ?1")
    defer { delete.reset() }
    try delete.bind(Int64(bitPattern: sequence), at: 1)
    _ = try delete.step()
  }

  /// Entry `sequence`, intact; `nil` when there is none or it is damaged.
  private func entry(_ sequence: UInt64, on connection: SQLiteConnection) throws(OutboxStoreError) -> OutboxEntry? {
    try Self.mapped { () throws(SQLiteStoreError) -> OutboxEntry? in
      let select = try connection.statement("SELECT \(Self.entryColumns) FROM \"\(table)\" WHERE seq = ?1")
      defer { select.reset() }
      try select.bind(Int64(bitPattern: sequence), at: 1)
      guard try select.step(), case .entry(let entry) = Self.load(select) else { return nil }
      return entry
    }
  }

  /// The columns ``load(_:)`` reads, in its order.
  private static let entryColumns = "seq, channel, scope, param, record, attempts, last_error"

  /// The row `select` stands on (``entryColumns``), checked.
  static func load(_ select: SQLiteStatement) -> OutboxLoad {
    OutboxEnvelope.load(
      sequence: UInt64(bitPattern: select.int64(at: 0)), channel: select.text(at: 1), scope: select.data(at: 2),
      param: select.data(at: 3), record: select.data(at: 4), attempts: select.int(at: 5),
      lastError: select.text(at: 6))
  }

  /// Runs `body`, reporting SQLite's errors as the outbox's.
  private static func mapped<Result>(_ body: () throws(SQLiteStoreError) -> Result) throws(OutboxStoreError) -> Result {
    do { return try body() } catch { throw outboxError(error) }
  }

  static func outboxError(_ error: SQLiteStoreError) -> OutboxStoreError {
    switch error {
    case .closed: .closed
    case .entryTooLarge(let size, let limit): .recordTooLarge(size: size, limit: limit)
    case .sqlite(let code, _) where code & 0xFF == SQLITE_FULL: .storageFull
    default: .failed(error)
    }
  }
}

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

extension SQLiteOutboxStore: SenderLockingOutboxStore {
  /// The file of the sender lock: `<database>.sender.lock`, beside the database. It holds the
  /// holder's process ID, for the error of the next one.
  public var senderLockURL: URL {
    URL(fileURLWithPath: url.standardizedFileURL.path + ".sender.lock")
  }

  /// Takes the sender lock with `flock` on ``senderLockURL``: free unless another open lease
  /// holds it, in this process or another; the system releases it when its process dies.
  ///
  /// - Important: On iOS, a suspended app that holds a file lock in a shared (app group)
  ///   container is terminated by the system (`0xdead10cc`), as one that holds an SQLite
  ///   lock there is. An app whose outbox lives in such a container closes it (the `close()`
  ///   of KilnRepository's `Outbox`) when it moves to the background, and opens it again
  ///   when it returns.
  ///
  /// - Throws: ``OutboxStoreError/failed(_:)`` with ``SQLiteStoreError/openFailed(path:code:message:)``
  ///   when the lock file cannot be opened or created.
  public func lockSender() async throws(OutboxStoreError) -> OutboxSenderLock {
    let path = senderLockURL.path
    // Never through a symbolic link (whose target would be truncated); read-only when the
    // file is another user's (flock needs no write access; the holder's ID is then not kept).
    var opened = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
    if opened < 0, errno == EACCES { opened = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) }
    let descriptor = opened
    guard descriptor >= 0 else {
      let code = errno
      throw .failed(SQLiteStoreError.openFailed(path: path, code: code, message: String(cString: strerror(code))))
    }
    guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
      let code = errno
      defer { POSIX.closeDescriptor(descriptor) }
      guard code == EWOULDBLOCK || code == EAGAIN else {
        throw .failed(
          SQLiteStoreError.openFailed(path: path, code: code, message: "flock: " + String(cString: strerror(code))))
      }
      var bytes = [UInt8](repeating: 0, count: 32)
      let count = pread(descriptor, &bytes, bytes.count, 0)
      let holder = count > 0 ? String(decoding: bytes[..<count], as: UTF8.self) : ""
      let pid = holder.split(separator: "\n").first.flatMap { Int32($0) }
      return .held(by: pid.map { "process \($0)" + ($0 == getpid() ? " (this one)" : "") } ?? "another process")
    }
    // The holder's ID, for whoever is refused next.
    let holder = Array("\(getpid())\n".utf8)
    if ftruncate(descriptor, 0) == 0 {
      _ = holder.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
    }
    return .acquired(
      OutboxSenderLease {
        _ = flock(descriptor, LOCK_UN)
        POSIX.closeDescriptor(descriptor)
      })
  }
}
