#if PostgreSQL
  public import Foundation
  public import PostgresNIO
  import _KilnSynchronization

  /// A `KeyValueStore` in a PostgreSQL table, shared by every process and machine that opens
  /// the same table.
  ///
  /// ```swift
  /// let client = PostgresClient(configuration: configuration)   // postgres-nio's pool
  /// async let _ = client.run()                                  // you own its lifecycle
  /// let store = try await PostgresStore<String, Article>(client: client, table: "articles")
  /// async let _ = store.run()                                   // sweeps expired rows
  /// try await store.setValue(article, forKey: "article/7", expiresAt: .now.addingTimeInterval(3_600))
  /// let cached = try await store.value(forKey: "article/7")
  /// let article = try await store.value(forKey: "article/8") { try await api.article(8) }  // one load fleet-wide
  /// ```
  ///
  /// One table per store holds the key and value (`bytea`, through a ``StoreCodec``), the
  /// stored-at, expiry and updated-at stamps; a second table (`<table>_leases`) holds the load
  /// leases of ``value(forKey:expiresAt:lease:waitTimeout:pollInterval:load:)``, and the
  /// shared table `kiln_store_schema` records each store table's schema version. Tables are
  /// created when missing. Every statement is parameterised: keys and values are never part
  /// of SQL text.
  ///
  /// Each write is one statement — an upsert, and for ``setValues(_:expiresAt:)`` one upsert
  /// of every entry — that also notifies the channel ``channel`` with `NOTIFY`, so that a
  /// ``PostgresCache`` in any process drops its memory copy. A write returns once it is
  /// committed: a `SELECT 1` after it on the same connection, one more round trip, proves the
  /// commit (postgres-nio reports a statement done before the server commits it). Expired rows are never
  /// returned (judged by the injected `now`), and ``run()`` deletes them in the background.
  ///
  /// - Important: The store does not own the `PostgresClient`: run the client (`client.run()`,
  ///   or add it to a swift-service-lifecycle `ServiceGroup`) for as long as the store is
  ///   used. With the `ServiceLifecycle` trait the store is a `Service`: a `ServiceGroup` runs
  ///   its sweeps too, and ends them on a graceful shutdown.
  public final class PostgresStore<Key: Hashable & Sendable, Value: Sendable>: KeyValueStore, Sendable {
    /// The connection pool the store runs its statements on.
    public let client: PostgresClient

    /// The table holding this store's entries.
    public let table: String

    /// The `NOTIFY` channel every write of this table notifies: `kiln_<table>`.
    public let channel: String

    /// How long an entry stored without an explicit expiry lives; `nil` for until removed.
    public let entryLifetime: Duration?

    /// How often ``run()`` deletes expired rows.
    public let sweepInterval: Duration

    /// How long one operation may take before it fails with ``PostgresStoreError/timedOut``:
    /// 10 seconds unless given; `nil` leaves it to the client and the server's
    /// `statement_timeout`, which cannot end a wait for an answer that never comes.
    ///
    /// The limit holds whatever the server and the network do: while the server refuses
    /// connections (postgres-nio's pool would otherwise queue the call until its circuit
    /// breaker trips, after a minute) the call returns at the limit and its queued request is
    /// withdrawn; a statement whose answer never comes (a connection that went silent, a
    /// blackholed route) is abandoned at the limit. The limit covers the whole operation,
    /// including the statement sent again after a connection closed under it.
    public let operationTimeout: Duration?

    /// The ``operationTimeout`` of a store that is not given one: 10 seconds.
    public static var defaultOperationTimeout: Duration { .seconds(10) }

    /// The version of the table layout this store reads and writes.
    public static var schemaVersion: Int { 1 }

    /// Identifies this store instance in its notifications, so that its own writes are not
    /// taken for another node's.
    let node: String
    let keyCodec: StoreCodec<Key>
    let valueCodec: StoreCodec<Value>
    let now: @Sendable () -> Date
    let clock: any Clock<Duration>
    /// What the store did: see ``statistics``.
    let counters = StoreCounters()
    /// How single-flight calls ended: see ``singleFlightStatistics``.
    let flightCounters = AtomicCounters<PostgresSingleFlightCounter>()
    let sql: Statements
    /// Runs the store's statements within ``operationTimeout``.
    let operations: PostgresOperations

    /// Opens the store's table on `client`, creating it (and its lease table) when missing.
    ///
    /// - Parameters:
    ///   - client: A running postgres-nio client; the store does not close it.
    ///   - table: The table of this store: letters, digits and `_`, at most 48 characters.
    ///     `kiln_cache` by default.
    ///   - entryLifetime: How long entries stored without an explicit expiry live; `nil` (the
    ///     default) keeps them until removed.
    ///   - sweepInterval: How often ``run()`` deletes expired rows; one minute by default.
    ///   - operationTimeout: A time limit for each operation on `clock`; 10 seconds by default
    ///     (``defaultOperationTimeout``), `nil` for none.
    ///   - keyCodec: How keys become bytes. It must be deterministic.
    ///   - valueCodec: How values become bytes.
    ///   - now: The wall clock that stamps and expires entries.
    ///   - clock: The clock of sweeps, operation time limits and lease waits.
    /// - Throws: ``PostgresStoreError/invalidTableName(_:)``,
    ///   ``PostgresStoreError/incompatibleTable(table:reason:)`` when the table exists with
    ///   another layout or a newer schema version, ``PostgresStoreError/connectionFailed(_:)``
    ///   when the server cannot be reached.
    public init(
      client: PostgresClient,
      table: String = "kiln_cache",
      entryLifetime: Duration? = nil,
      sweepInterval: Duration = .seconds(60),
      operationTimeout: Duration? = defaultOperationTimeout,
      keyCodec: StoreCodec<Key>,
      valueCodec: StoreCodec<Value>,
      now: @escaping @Sendable () -> Date = Date.init,
      clock: any Clock<Duration> = ContinuousClock()
    ) async throws {
      guard isPlainSQLIdentifier(table, maximumLength: 48) else { throw PostgresStoreError.invalidTableName(table) }
      precondition(entryLifetime.map { $0 > .zero } ?? true, "PostgresStore entryLifetime must be positive")
      precondition(sweepInterval > .zero, "PostgresStore sweepInterval must be positive")
      self.client = client
      self.table = table
      channel = "kiln_\(table)"
      self.entryLifetime = entryLifetime
      self.sweepInterval = sweepInterval
      self.operationTimeout = operationTimeout
      operations = PostgresOperations(client: client, operationTimeout: operationTimeout, clock: clock)
      self.keyCodec = keyCodec
      self.valueCodec = valueCodec
      self.now = now
      self.clock = clock
      node = String(UInt64.random(in: 1...UInt64.max), radix: 16)
      sql = Statements(table: table)
      try await perform { [sql, table] connection in
        try await PostgresOperations.inTransaction(on: connection) {
          try await PostgresSchema.prepare(
            table, creating: sql.createTables, version: Self.schemaVersion, columns: Statements.expectedColumns,
            thenCreating: [sql.createIndex], on: connection)
        }
      }
    }

    static var logger: Logger { postgresStoreLogger }

    // MARK: - Reading

    /// The entry stored under `key`, or `nil` when there is none, it has expired, or its row
    /// does not decode (a corrupt or foreign row is a miss, never a crash).
    ///
    /// - Throws: ``PostgresStoreError`` when the server cannot answer; `CancellationError`.
    public func entry(forKey key: Key) async throws -> CacheEntry<Value>? {
      let keyBytes = try encode(key)
      let instant = now()
      let query = sql.select(key: keyBytes, now: instant)
      // Counted once the statement succeeded: `perform` runs it again after a lost connection.
      let (found, unreadable) = try await perform { [valueCodec] connection in
        var found: CacheEntry<Value>?
        var unreadable = 0
        for row in try await LeasedStatement.run(query, on: connection).rows {
          guard let (bytes, storedAt, expiresAt) = try? row.decode((ByteBuffer, Date, Date?).self),
            let value = try? valueCodec.decode(Data(bytes.readableBytesView))
          else {
            unreadable += 1
            continue
          }
          found = CacheEntry(value: value, storedAt: storedAt, expiresAt: expiresAt)
        }
        return (found, unreadable)
      }
      if unreadable > 0 { counters.add(.unreadableEntries, unreadable) }
      counters.add(found == nil ? .misses : .hits)
      return found
    }

    /// The number of entries that have not expired.
    public var count: Int {
      get async throws {
        let query = sql.count(now: now())
        return try await perform { connection in
          var count = 0
          for row in try await LeasedStatement.run(query, on: connection).rows {
            count = Int(try row.decode(Int64.self))
          }
          return count
        }
      }
    }

    // MARK: - Writing

    /// Stores `value` under `key`: one upsert (and its notification), returning once committed.
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: Its key.
    ///   - expiresAt: When it expires; `nil` applies ``entryLifetime``.
    /// - Throws: ``PostgresStoreError``; a write that threw was not committed, except when the
    ///   connection broke, or ``operationTimeout`` passed, after the server received it (then
    ///   it is stored in full or not at all).
    public func setValue(_ value: Value, forKey key: Key, expiresAt: Date?) async throws {
      let keyBytes = try encode(key)
      let valueBytes = try encodeValue(value)
      let stamp = now()
      let expiry = expiresAt ?? entryLifetime.map { stamp.addingTimeInterval($0.timeInterval) }
      let query = sql.upsert(
        key: keyBytes, value: valueBytes, storedAt: stamp, expiresAt: expiry, channel: channel, node: node)
      _ = try await perform { connection in
        try await LeasedStatement.run(query, on: connection, confirmingCommit: true)
      }
      counters.add(.writes)
      counters.add(.writtenBytes, keyBytes.count + valueBytes.count)
    }

    /// Stores many values in one statement: all of them or, on error, none.
    ///
    /// ```swift
    /// try await store.setValues(articles.map { ("article/\($0.id)", $0) })
    /// ```
    ///
    /// - Parameters:
    ///   - entries: The keys and values; a key given twice keeps its last value.
    ///   - expiresAt: When they expire; `nil` applies ``entryLifetime``.
    /// - Throws: ``PostgresStoreError``.
    public func setValues(_ entries: some Sequence<(Key, Value)>, expiresAt: Date? = nil) async throws {
      var positions: [Data: Int] = [:]
      var keys: [Data] = []
      var values: [Data] = []
      for (key, value) in entries {
        let keyBytes = try encode(key)
        let valueBytes = try encodeValue(value)
        if let position = positions[keyBytes] {
          values[position] = valueBytes
        } else {
          positions[keyBytes] = keys.count
          keys.append(keyBytes)
          values.append(valueBytes)
        }
      }
      guard !keys.isEmpty else { return }
      let stamp = now()
      let expiry = expiresAt ?? entryLifetime.map { stamp.addingTimeInterval($0.timeInterval) }
      let query = sql.upsertMany(
        keys: keys, values: values, storedAt: stamp, expiresAt: expiry, channel: channel, node: node)
      _ = try await perform { connection in
        try await LeasedStatement.run(query, on: connection, confirmingCommit: true)
      }
      counters.add(.writes, keys.count)
      counters.add(.writtenBytes, keys.reduce(0) { $0 + $1.count } + values.reduce(0) { $0 + $1.count })
    }

    /// Removes the entry stored under `key`, if any (and notifies the other nodes).
    ///
    /// - Throws: ``PostgresStoreError``.
    public func removeValue(forKey key: Key) async throws {
      let query = sql.delete(key: try encode(key), channel: channel, node: node)
      _ = try await perform { connection in
        try await LeasedStatement.run(query, on: connection, confirmingCommit: true)
      }
      counters.add(.removals)
    }

    /// Removes every entry of this store's table (and notifies the other nodes).
    ///
    /// - Throws: ``PostgresStoreError``.
    public func removeAll() async throws {
      let query = sql.deleteAll(channel: channel, node: node)
      _ = try await perform { connection in
        try await LeasedStatement.run(query, on: connection, confirmingCommit: true)
      }
    }

    /// Deletes every expired row (and every expired load lease) now.
    ///
    /// - Returns: The number of entries deleted.
    /// - Throws: ``PostgresStoreError``.
    @discardableResult
    public func removeExpired() async throws -> Int {
      let query = sql.deleteExpired(now: now())
      let leases = sql.deleteExpiredLeases()
      let deleted = try await perform { connection in
        var deleted = 0
        for row in try await LeasedStatement.run(query, on: connection).rows {
          deleted = Int(try row.decode(Int64.self))
        }
        _ = try await LeasedStatement.run(leases, on: connection)
        return deleted
      }
      counters.add(.expirations, deleted)
      return deleted
    }

    /// Deletes expired rows every ``sweepInterval`` on the injected clock until the task is
    /// cancelled.
    ///
    /// A sweep that fails (the server is restarting) is tried again at the next interval.
    /// Run it beside the client: `async let _ = store.run()`, a task group, or a
    /// swift-service-lifecycle `ServiceGroup`.
    public func run() async {
      // In a ServiceGroup, a graceful shutdown ends the loop as a cancellation does.
      await runUntilGracefulShutdown { await self.runUntilCancelled() }
    }

    private func runUntilCancelled() async {
      while !Task.isCancelled {
        do {
          try await clock.sleep(for: sweepInterval)
        } catch {
          return
        }
        _ = try? await removeExpired()
      }
    }

    // MARK: - Internal

    func encode(_ key: Key) throws -> Data {
      do { return try keyCodec.encode(key) } catch { throw PostgresStoreError.keyEncodingFailed(error) }
    }

    func encodeValue(_ value: Value) throws -> Data {
      do { return try valueCodec.encode(value) } catch { throw PostgresStoreError.valueEncodingFailed(error) }
    }

    /// Runs `body` on a connection of the pool, within ``operationTimeout``: see
    /// ``PostgresOperations/perform(_:)``.
    func perform<Result: Sendable>(
      _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
      try await operations.perform(body)
    }
  }

  extension PostgresStore where Key: Codable, Value: Codable {
    /// Opens the store's table on `client`, coding keys and values with ``StoreCodec/automatic``.
    ///
    /// ```swift
    /// let store = try await PostgresStore<String, Article>(client: client, table: "articles")
    /// ```
    ///
    /// - Parameters:
    ///   - client: A running postgres-nio client; the store does not close it.
    ///   - table: The table of this store; `kiln_cache` by default.
    ///   - entryLifetime: How long entries stored without an explicit expiry live.
    ///   - sweepInterval: How often ``run()`` deletes expired rows.
    ///   - operationTimeout: A time limit for each operation; 10 seconds by default, `nil` for
    ///     none.
    ///   - now: The wall clock that stamps and expires entries.
    ///   - clock: The clock of sweeps, operation time limits and lease waits.
    /// - Throws: ``PostgresStoreError``.
    public convenience init(
      client: PostgresClient,
      table: String = "kiln_cache",
      entryLifetime: Duration? = nil,
      sweepInterval: Duration = .seconds(60),
      operationTimeout: Duration? = defaultOperationTimeout,
      now: @escaping @Sendable () -> Date = Date.init,
      clock: any Clock<Duration> = ContinuousClock()
    ) async throws {
      try await self.init(
        client: client, table: table, entryLifetime: entryLifetime, sweepInterval: sweepInterval,
        operationTimeout: operationTimeout, keyCodec: .automatic, valueCodec: .automatic, now: now, clock: clock)
    }
  }

  /// The logger of the statements the stores run on a leased connection: quiet, since
  /// every failure reaches the caller as a ``PostgresStoreError``.
  let postgresStoreLogger: Logger = {
    var logger = Logger(label: "kiln.postgres")
    logger.logLevel = .critical
    return logger
  }()

  extension PostgresRowSequence {
    /// Reads every row so the connection returns to the pool (and errors surface).
    func drain() async throws {
      for try await _ in self {}
    }
  }

  extension PostgresStore: CountingSource {
    /// What the store did since it was created in this process: see ``StoreStatistics``
    /// (expired rows are never read, so ``StoreStatistics/expiredReads`` and
    /// ``StoreStatistics/evictions`` stay 0).
    public var statistics: StoreStatistics {
      StoreStatistics(counters)
    }

    /// ``statistics`` named for export, with the prefix `kiln_postgres_store` (the names of
    /// ``DiskCache/counterReadings()``), followed by ``singleFlightStatistics``:
    /// `kiln_postgres_store_single_flight_total` (`outcome`: `found`, `joined`, `loaded`,
    /// `failed`, `timed_out`, `cancelled`) and `kiln_postgres_store_lease_takeovers_total`.
    public func counterReadings() -> [CounterReading] {
      statistics.readings(prefix: "kiln_postgres_store") + singleFlightReadings
    }
  }
#endif
