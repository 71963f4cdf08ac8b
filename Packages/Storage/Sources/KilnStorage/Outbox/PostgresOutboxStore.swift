#if PostgreSQL
  public import Foundation
  public import PostgresNIO
  import _KilnSynchronization

  /// An ``OutboxStore`` in a PostgreSQL table: for a server whose writes to other services
  /// must survive its own restart, or a machine that has no disk of its own to keep them on.
  ///
  /// ```swift
  /// let client = PostgresClient(configuration: configuration)   // postgres-nio's pool
  /// async let _ = client.run()                                  // you own its lifecycle
  /// let store = try await PostgresOutboxStore(client: client, table: "orders_outbox")
  /// let outbox = try await Outbox.open(store)
  /// ```
  ///
  /// The table (created when missing) holds one row per entry: its sequence (an identity
  /// column, so never reused), channel, scope, param, idempotency key and record, in the
  /// checksummed envelope that ``SQLiteOutboxStore`` keeps too, with the attempts and last
  /// error. Quarantined entries move to `<table>_quarantine`. Every value is a bound
  /// parameter; only the validated table name is part of the SQL text.
  ///
  /// What it adds to the protocol's promises:
  /// - **Every write is one statement** (an append that finds its key stored runs it again to
  ///   read that row; a quarantine sent again reads the quarantine), committed when the call
  ///   returns: a `SELECT 1` after it on the same connection proves the commit, as for
  ///   ``PostgresStore``.
  /// - **Idempotency keys are unique in the table**, so the same record appended through two
  ///   instances, two processes or two machines at once is stored once: each gets the one
  ///   entry's sequence. (A record whose stored twin is damaged is a
  ///   ``OutboxStoreError/keyConflict(_:)`` here, where ``SQLiteOutboxStore`` appends it
  ///   anew: quarantine the damaged entry first.)
  /// - **A connection lost under a call** (the server restarted, a session ended) sends the
  ///   statement again on another connection, within ``operationTimeout``: every statement
  ///   is idempotent (an append finds its own row by its key), so nothing is written twice.
  /// - **Writes are not cancelled** by the caller's task: a write the user made is completed
  ///   (or fails) within ``operationTimeout``, as ``SQLiteOutboxStore``'s are. Reads are:
  ///   a cancelled ``loadAll()`` throws ``OutboxStoreError/failed(_:)`` with a
  ///   `CancellationError`.
  ///
  /// Sequences come from a PostgreSQL sequence: they grow, but appends made at the same
  /// moment through two connections may commit in the other order. KilnRepository's
  /// `Outbox` appends one record at a time, so its entries keep their order; one outbox per
  /// table, which the sender lock (``lockSender()``) enforces.
  ///
  /// Errors: a full disk on the server (SQLSTATE `53100`) is
  /// ``OutboxStoreError/storageFull``; a record over ``maximumRecordBytes`` is
  /// ``OutboxStoreError/recordTooLarge(size:limit:)``; the rest is
  /// ``OutboxStoreError/failed(_:)`` with a ``PostgresStoreError``.
  ///
  /// - Important: A write that fails with a ``PostgresStoreError`` whose
  ///   ``PostgresStoreError/isOutcomeUnknown`` is true (the connection broke, or
  ///   ``operationTimeout`` passed, after the server received it) may still commit: the
  ///   server runs a statement blocked on a lock until it ends, even after the client gave
  ///   up. This is the one exception to "a call that threw wrote nothing". An append that
  ///   failed that way and later committed is loaded by the next `Outbox` and sent, under
  ///   its own idempotency key. To rule it out, give the client's sessions a
  ///   `statement_timeout` shorter than ``operationTimeout``
  ///   (`configuration.options.additionalStartupParameters`).
  ///
  /// - Important: The store does not own the `PostgresClient`: run the client for as long as
  ///   the store is used.
  public final class PostgresOutboxStore: OutboxStore, Sendable {
    /// The connection pool the store runs its statements on.
    public let client: PostgresClient

    /// The table of the entries; quarantined ones are in `<table>_quarantine`.
    public let table: String

    /// How long one call may take before it fails with ``PostgresStoreError/timedOut``;
    /// `nil` for no limit but the server's.
    public let operationTimeout: Duration?

    /// The largest record, encoded, that an append or a replace accepts.
    public let maximumRecordBytes: Int

    /// The ``maximumRecordBytes`` of a store that is not given one: 64 MiB.
    public static var defaultMaximumRecordBytes: Int { 64 << 20 }

    /// The version of the table layout this store reads and writes.
    public static var schemaVersion: Int { 1 }

    private let operations: PostgresOperations
    private let now: @Sendable () -> Date
    private let clock: any Clock<Duration>
    private let isClosed = KilnMutex(false)
    private let entries: String
    private let quarantine: String

    /// The columns an outbox table must have, with their `information_schema` types.
    static let expectedColumns: [(String, String)] = [
      ("seq", "bigint"), ("channel", "text"), ("scope", "bytea"), ("param", "bytea"), ("idem_key", "bytea"),
      ("record", "bytea"), ("attempts", "integer"), ("last_error", "text"),
    ]

    /// Opens the outbox table on `client`, creating it (and its quarantine table) when missing.
    ///
    /// - Parameters:
    ///   - client: A running postgres-nio client; the store does not close it.
    ///   - table: The entries' table: letters, digits and `_`, at most 48 characters;
    ///     `kiln_outbox` by default.
    ///   - operationTimeout: A time limit for each call on `clock`; 10 seconds by default,
    ///     `nil` for none.
    ///   - maximumRecordBytes: The largest encoded record accepted; 64 MiB by default.
    ///   - now: The wall clock that dates quarantines.
    ///   - clock: The clock of the time limits.
    /// - Throws: ``PostgresStoreError/invalidTableName(_:)``,
    ///   ``PostgresStoreError/incompatibleTable(table:reason:)`` when the table exists with
    ///   another layout or a newer schema version (it is left as it is),
    ///   ``PostgresStoreError/connectionFailed(_:)`` when the server cannot be reached.
    public init(
      client: PostgresClient,
      table: String = "kiln_outbox",
      operationTimeout: Duration? = PostgresStore<String, Data>.defaultOperationTimeout,
      maximumRecordBytes: Int = defaultMaximumRecordBytes,
      now: @escaping @Sendable () -> Date = Date.init,
      clock: any Clock<Duration> = ContinuousClock()
    ) async throws(PostgresStoreError) {
      guard isPlainSQLIdentifier(table, maximumLength: 48) else { throw .invalidTableName(table) }
      precondition(maximumRecordBytes > 0, "PostgresOutboxStore: maximumRecordBytes must be positive")
      self.client = client
      self.table = table
      self.operationTimeout = operationTimeout
      self.maximumRecordBytes = maximumRecordBytes
      self.now = now
      self.clock = clock
      operations = PostgresOperations(client: client, operationTimeout: operationTimeout, clock: clock)
      entries = "\"\(table)\""
      quarantine = "\"\(table)_quarantine\""
      let (entries, quarantine) = (entries, quarantine)
      do {
        try await operations.perform { connection in
          try await PostgresOperations.inTransaction(on: connection) {
            try await Self.createSchema(table: table, entries: entries, quarantine: quarantine, on: connection)
          }
        }
      } catch {
        throw error as? PostgresStoreError ?? .connectionFailed(String(describing: error))
      }
    }

    private static func createSchema(
      table: String, entries: String, quarantine: String, on connection: PostgresConnection
    ) async throws {
      let tables: [PostgresQuery] = [
        """
        CREATE TABLE IF NOT EXISTS \(unescaped: entries) (
          seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, channel text NOT NULL, scope bytea NOT NULL,
          param bytea NOT NULL, idem_key bytea NOT NULL, record bytea NOT NULL,
          attempts integer NOT NULL DEFAULT 0, last_error text)
        """,
        """
        CREATE TABLE IF NOT EXISTS \(unescaped: quarantine) (
          id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, seq bigint NOT NULL, channel text, param bytea,
          record bytea NOT NULL, reason text NOT NULL, quarantined_at timestamptz NOT NULL)
        """,
      ]
      let keyIndex: PostgresQuery =
        "CREATE UNIQUE INDEX IF NOT EXISTS \(unescaped: "\"\(table)_idem_key\"") ON \(unescaped: entries) (idem_key)"
      try await PostgresSchema.prepare(
        table, creating: tables, version: schemaVersion, columns: expectedColumns, thenCreating: [keyIndex],
        on: connection)
    }

    // MARK: - Writing

    public func append(_ record: OutboxRecord) async throws(OutboxStoreError) -> UInt64 {
      let envelope = try encode(record)
      let insert: PostgresQuery = """
        WITH inserted AS (
          INSERT INTO \(unescaped: entries) (channel, scope, param, idem_key, record)
          VALUES (\(record.channel), \(ByteBuffer(bytes: record.scope)), \(ByteBuffer(bytes: record.param)),
            \(ByteBuffer(bytes: record.idempotencyKey.bytes)), \(ByteBuffer(bytes: envelope)))
          ON CONFLICT (idem_key) DO NOTHING RETURNING seq)
        SELECT seq, NULL::bytea FROM inserted
        UNION ALL
        SELECT seq, record FROM \(unescaped: entries)
        WHERE idem_key = \(ByteBuffer(bytes: record.idempotencyKey.bytes)) AND NOT EXISTS (SELECT 1 FROM inserted)
        """
      // A row with the key that committed after the statement's snapshot, or was removed in
      // between, leaves no row to answer with: the statement runs again and sees it settled.
      for _ in 0..<3 {
        let found = try await write { connection -> (Int64, ByteBuffer?)? in
          var found: (Int64, ByteBuffer?)?
          for row in try await LeasedStatement.run(insert, on: connection, confirmingCommit: true).rows {
            found = try row.decode((Int64, ByteBuffer?).self)
          }
          return found
        }
        guard let (sequence, stored) = found else { continue }
        // Inserted, or the same write appended again (a retry after an unknown outcome).
        guard let stored, Data(stored.readableBytesView) != envelope else { return UInt64(sequence) }
        throw .keyConflict(record.idempotencyKey)
      }
      throw .failed(
        PostgresStoreError.server(code: "40001", message: "the idempotency key's row kept changing under the append"))
    }

    public func replace(_ sequence: UInt64, with record: OutboxRecord) async throws(OutboxStoreError) {
      let envelope = try encode(record)
      let update: PostgresQuery = """
        UPDATE \(unescaped: entries) SET channel = \(record.channel), scope = \(ByteBuffer(bytes: record.scope)),
          param = \(ByteBuffer(bytes: record.param)), idem_key = \(ByteBuffer(bytes: record.idempotencyKey.bytes)),
          record = \(ByteBuffer(bytes: envelope)), attempts = 0, last_error = NULL
        WHERE seq = \(Int64(bitPattern: sequence)) RETURNING seq
        """
      let updated: Bool
      do {
        updated = try await write { connection in
          try await LeasedStatement.run(update, on: connection, confirmingCommit: true).rows.count == 1
        }
      } catch {
        // Another entry holds the key (the table's unique index refused it).
        if case .failed(let cause) = error, case .server(code: "23505", _)? = cause as? PostgresStoreError {
          throw .keyConflict(record.idempotencyKey)
        }
        throw error
      }
      guard updated else { throw .notFound(sequence: sequence) }
    }

    public func remove(_ sequences: [UInt64]) async throws(OutboxStoreError) {
      guard !sequences.isEmpty else { return }
      let delete: PostgresQuery =
        "DELETE FROM \(unescaped: entries) WHERE seq = ANY(\(sequences.map { Int64(bitPattern: $0) }))"
      _ = try await write { connection in
        try await LeasedStatement.run(delete, on: connection, confirmingCommit: true).rows.count
      }
    }

    public func recordFailure(_ sequence: UInt64, attempts: Int, error message: String) async throws(OutboxStoreError) {
      let update: PostgresQuery = """
        UPDATE \(unescaped: entries) SET attempts = \(Int32(clamping: attempts)), last_error = \(Self.text(message))
        WHERE seq = \(Int64(bitPattern: sequence)) RETURNING seq
        """
      let updated = try await write { connection in
        try await LeasedStatement.run(update, on: connection, confirmingCommit: true).rows.count == 1
      }
      guard updated else { throw .notFound(sequence: sequence) }
    }

    public func quarantine(_ sequence: UInt64, reason: String) async throws(OutboxStoreError) {
      let sequence = Int64(bitPattern: sequence)
      let move: PostgresQuery = """
        WITH moved AS (
          DELETE FROM \(unescaped: entries) WHERE seq = \(sequence) RETURNING seq, channel, param, record)
        INSERT INTO \(unescaped: quarantine) (seq, channel, param, record, reason, quarantined_at)
        SELECT seq, channel, param, record, \(Self.text(reason)), \(now()) FROM moved RETURNING seq
        """
      let check: PostgresQuery = "SELECT 1 FROM \(unescaped: quarantine) WHERE seq = \(sequence)"
      let attempts = KilnMutex(0)
      let moved = try await write { connection in
        let attempt = attempts.withLock { count in
          count += 1
          return count
        }
        if try await LeasedStatement.run(move, on: connection, confirmingCommit: true).rows.count == 1 { return true }
        // Sent again after its connection closed: the first may have committed the move.
        guard attempt > 1 else { return false }
        return try await LeasedStatement.run(check, on: connection).rows.count > 0
      }
      guard moved else { throw .notFound(sequence: UInt64(bitPattern: sequence)) }
    }

    // MARK: - Reading

    public func loadAll() async throws(OutboxStoreError) -> [OutboxLoad] {
      let select: PostgresQuery = """
        SELECT seq, channel, scope, param, record, attempts, last_error FROM \(unescaped: entries) ORDER BY seq
        """
      return try await read { connection in
        var loads: [OutboxLoad] = []
        for row in try await LeasedStatement.run(select, on: connection).rows {
          let (sequence, channel, scope, param, record, attempts, lastError) = try row.decode(
            (Int64, String, ByteBuffer, ByteBuffer, ByteBuffer, Int32, String?).self)
          loads.append(
            OutboxEnvelope.load(
              sequence: UInt64(bitPattern: sequence), channel: channel, scope: Data(scope.readableBytesView),
              param: Data(param.readableBytesView), record: Data(record.readableBytesView), attempts: Int(attempts),
              lastError: lastError))
        }
        return loads
      }
    }

    public func quarantined() async throws(OutboxStoreError) -> [OutboxQuarantined] {
      let select: PostgresQuery = """
        SELECT seq, channel, param, record, reason, quarantined_at FROM \(unescaped: quarantine) ORDER BY id
        """
      return try await read { connection in
        var quarantined: [OutboxQuarantined] = []
        for row in try await LeasedStatement.run(select, on: connection).rows {
          let (sequence, channel, param, record, reason, date) = try row.decode(
            (Int64, String?, ByteBuffer?, ByteBuffer, String, Date).self)
          quarantined.append(
            OutboxQuarantined(
              sequence: UInt64(bitPattern: sequence), channel: channel, param: param.map { Data($0.readableBytesView) },
              storedBytes: Data(record.readableBytesView), reason: reason, quarantinedAt: date))
        }
        return quarantined
      }
    }

    /// Closes the store: every later call throws ``OutboxStoreError/closed``. The client stays
    /// open (the store does not own it).
    public func close() async {
      isClosed.withLock { $0 = true }
    }

    // MARK: - Internal

    /// The envelope of `record`, within ``maximumRecordBytes``.
    private func encode(_ record: OutboxRecord) throws(OutboxStoreError) -> Data {
      let envelope = try OutboxEnvelope.encode(record)
      guard envelope.count <= maximumRecordBytes else {
        throw .recordTooLarge(size: envelope.count, limit: maximumRecordBytes)
      }
      return envelope
    }

    /// `text` as PostgreSQL takes it: a `text` value cannot hold a NUL character.
    private static func text(_ text: String) -> String {
      text.contains("\0") ? text.replacingOccurrences(of: "\0", with: "\u{FFFD}") : text
    }

    /// Runs a write: in a task of its own, so that the caller's cancellation does not drop
    /// it half-way; it ends within ``operationTimeout``.
    private func write<Result: Sendable>(
      _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws(OutboxStoreError) -> Result {
      guard !isClosed.withLock({ $0 }) else { throw .closed }
      let operations = operations
      let result = await Task { () async -> Swift.Result<Result, any Error> in
        do { return .success(try await operations.perform(body)) } catch { return .failure(error) }
      }.value
      return try Self.mapped(result)
    }

    /// Runs a read; the caller's cancellation ends it.
    private func read<Result: Sendable>(
      _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws(OutboxStoreError) -> Result {
      guard !isClosed.withLock({ $0 }) else { throw .closed }
      do {
        return try await operations.perform(body)
      } catch {
        throw Self.outboxError(error)
      }
    }

    private static func mapped<Result>(_ result: Swift.Result<Result, any Error>) throws(OutboxStoreError) -> Result {
      switch result {
      case .success(let value): return value
      case .failure(let error): throw outboxError(error)
      }
    }

    /// What `error`, from ``PostgresOperations/perform(_:)``, is as an outbox error.
    static func outboxError(_ error: any Error) -> OutboxStoreError {
      switch error {
      case let error as OutboxStoreError: error
      case PostgresStoreError.server(code: "53100", _): .storageFull
      default: .failed(error)
      }
    }
  }

  extension PostgresOutboxStore: SenderLockingOutboxStore {
    /// The first key of the table's advisory lock (`KILN`); the second is the hash of the
    /// schema-qualified table name.
    static let senderLockClass: Int32 = 0x4B49_4C4E

    /// Takes the sender lock: a session-level advisory lock on the table (qualified by the
    /// current schema), held on a pooled connection that the lease keeps (the pool has one
    /// connection less while it is held).
    ///
    /// The lock lasts as long as that session: if the server ends it (a restart, an
    /// administrator), another outbox can take the table while this one still sends. Entries
    /// keep their idempotency keys, so a server that honours them still applies each once.
    /// Releasing unlocks it on the session (and closes the connection when the unlock fails
    /// or does not answer within ``operationTimeout``, which ends the lock with the session).
    ///
    /// - Throws: ``OutboxStoreError/closed``, or ``OutboxStoreError/failed(_:)`` with a
    ///   ``PostgresStoreError`` when the server cannot be reached within ``operationTimeout``.
    public func lockSender() async throws(OutboxStoreError) -> OutboxSenderLock {
      guard !isClosed.withLock({ $0 }) else { throw .closed }
      let (table, client, clock, limit) = (table, client, clock, operationTimeout)
      let answer = Race<Swift.Result<Bool, any Error>>()
      let released = Signal()
      let holding = Task {
        for attempt in 1...PostgresOperations.maximumAttempts {
          do {
            return try await client.withConnection { connection in
              try await Self.holdLock(
                table: table, on: connection, answer: answer, released: released,
                unlockLimit: limit, clock: clock)
            }
          } catch  where LeasedStatement.isConnectionLoss(error) && attempt < PostgresOperations.maximumAttempts {
            continue  // a connection that closed before it answered: another one
          } catch {
            answer.resolve(.failure(error))
            return
          }
        }
      }
      // Ended once answered: a connection it still waits for is not taken.
      answer.track(holding)
      let timer = limit.map { limit in
        Task {
          guard (try? await clock.sleep(for: limit)) != nil else { return }
          answer.resolve(.failure(PostgresStoreError.timedOut))
        }
      }
      defer { timer?.cancel() }
      let locked: Bool
      switch await answer.wait(orWhenCancelled: { .failure(CancellationError()) }) {
      case .success(let value): locked = value
      case .failure(let error):
        released.signal()
        throw Self.outboxError(PostgresStoreError.mapping(error))
      }
      guard locked else {
        released.signal()
        return .held(by: await holder())
      }
      return .acquired(
        OutboxSenderLease {
          released.signal()
          await holding.value  // unlocked, or the session is gone
        })
    }

    /// On `connection`: tries the lock, tells `answer`, and when it got it, holds it until
    /// `released` (or until the session ends), then unlocks it.
    private static func holdLock(
      table: String, on connection: PostgresConnection,
      answer: Race<Swift.Result<Bool, any Error>>, released: Signal, unlockLimit: Duration?,
      clock: any Clock<Duration>
    ) async throws {
      var locked = false
      let rows = try await LeasedStatement.run(
        "SELECT pg_try_advisory_lock(\(senderLockClass), hashtext(current_schema() || '.' || \(table)))", on: connection
      )
      for row in rows.rows { locked = try row.decode(Bool.self) }
      if answer.resolve(.success(locked)) {
        guard locked else { return }
        // Held until released, or until the session ends (the lock with it).
        connection.closeFuture.whenComplete { _ in released.signal() }
        await released.wait()
      } else if !locked {
        return  // answered already (timed out, cancelled): nothing to give back
      }
      // Given back on the session; a connection that cannot say so is closed, which ends the
      // session and the lock with it, so that the pool never lends a connection holding it.
      let guardTask = unlockLimit.map { limit in
        Task {
          guard (try? await clock.sleep(for: limit)) != nil else { return }
          let _: EventLoopFuture<Void> = connection.close()
        }
      }
      defer { guardTask?.cancel() }
      var unlocked = false
      if let rows = try? await LeasedStatement.run(
        "SELECT pg_advisory_unlock(\(senderLockClass), hashtext(current_schema() || '.' || \(table)))", on: connection)
      {
        for row in rows.rows { unlocked = (try? row.decode(Bool.self)) ?? false }
      }
      if !unlocked { try? await connection.close() }
    }

    /// Who holds the table's sender lock, as the server tells: its backend and address.
    private func holder() async -> String {
      let query: PostgresQuery = """
        SELECT l.pid, coalesce(a.client_addr::text, 'a local socket') FROM pg_locks l
        LEFT JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
          AND l.classid::bigint = \(Int64(Self.senderLockClass))
          AND l.objid::bigint = (hashtext(current_schema() || '.' || \(table))::bigint & 4294967295)
        """
      let found = try? await operations.perform { connection -> String? in
        var holder: String?
        for row in try await LeasedStatement.run(query, on: connection).rows {
          let (pid, address) = try row.decode((Int32, String).self)
          holder = "PostgreSQL session \(pid) (\(address))"
        }
        return holder
      }
      return (found ?? nil) ?? "another PostgreSQL session"
    }
  }
#endif
