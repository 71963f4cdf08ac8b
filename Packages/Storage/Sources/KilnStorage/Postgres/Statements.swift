#if PostgreSQL
  import Foundation
  import PostgresNIO

  /// The SQL of one ``PostgresStore`` table. Only the validated table name is part of the
  /// text; keys, values, stamps and notification payloads are always bound parameters.
  struct Statements: Sendable {
    let table: String
    let leases: String
    let expiryIndex: String

    /// The columns a store table must have, with their `information_schema` types.
    static let expectedColumns: [(String, String)] = [
      ("key", "bytea"), ("key_hash", "bytea"), ("value", "bytea"), ("stored_at", "timestamp with time zone"),
      ("expires_at", "timestamp with time zone"), ("updated_at", "timestamp with time zone"),
    ]

    /// The notification payload naming a key: its bytes in hex when they fit in a
    /// notification, else `#` and their SHA-256 (the listener then drops its whole tier).
    private static let keyPayload =
      "CASE WHEN length(key) <= \(PostgresCacheNotification.maximumKeyBytes) THEN 'k' || encode(key, 'hex') "
      + "ELSE '#' || encode(sha256(key), 'hex') END"

    init(table: String) {
      self.table = "\"\(table)\""
      leases = "\"\(table)_leases\""
      expiryIndex = "\"\(table)_expires_at\""
    }

    /// The store's table and its lease table, created when missing (see ``PostgresSchema``).
    var createTables: [PostgresQuery] {
      [
        """
        CREATE TABLE IF NOT EXISTS \(unescaped: table) (
          key bytea NOT NULL, key_hash bytea GENERATED ALWAYS AS (sha256(key)) STORED PRIMARY KEY,
          value bytea NOT NULL, stored_at timestamptz NOT NULL, expires_at timestamptz,
          updated_at timestamptz NOT NULL DEFAULT clock_timestamp())
        """,
        """
        CREATE TABLE IF NOT EXISTS \(unescaped: leases) (
          key_hash bytea PRIMARY KEY, holder text NOT NULL, expires_at timestamptz NOT NULL)
        """,
      ]
    }

    /// Created once the table's columns are checked: a foreign table is left untouched.
    var createIndex: PostgresQuery {
      "CREATE INDEX IF NOT EXISTS \(unescaped: expiryIndex) ON \(unescaped: table) (expires_at) WHERE expires_at IS NOT NULL"
    }

    func select(key: Data, now: Date) -> PostgresQuery {
      let key = ByteBuffer(bytes: key)
      return """
        SELECT value, stored_at, expires_at FROM \(unescaped: table) \
        WHERE key_hash = sha256(\(key)) AND key = \(key) AND (expires_at IS NULL OR expires_at >= \(now))
        """
    }

    func count(now: Date) -> PostgresQuery {
      "SELECT count(*) FROM \(unescaped: table) WHERE expires_at IS NULL OR expires_at >= \(now)"
    }

    func upsert(key: Data, value: Data, storedAt: Date, expiresAt: Date?, channel: String, node: String)
      -> PostgresQuery
    {
      let key = ByteBuffer(bytes: key)
      let value = ByteBuffer(bytes: value)
      return """
          WITH written AS (
          INSERT INTO \(unescaped: table) (key, value, stored_at, expires_at, updated_at)
          VALUES (\(key), \(value), \(storedAt), \(expiresAt), clock_timestamp())
          ON CONFLICT (key_hash) DO UPDATE SET value = EXCLUDED.value, stored_at = EXCLUDED.stored_at,
            expires_at = EXCLUDED.expires_at, updated_at = EXCLUDED.updated_at
          RETURNING key)
        SELECT pg_notify(\(channel), \(node + " ") || \(unescaped: Self.keyPayload)) FROM written
        """
    }

    func upsertMany(
      keys: [Data], values: [Data], storedAt: Date, expiresAt: Date?, channel: String, node: String
    ) -> PostgresQuery {
      let keyBuffers = keys.map { ByteBuffer(bytes: $0) }
      let valueBuffers = values.map { ByteBuffer(bytes: $0) }
      return """
        WITH written AS (
          INSERT INTO \(unescaped: table) (key, value, stored_at, expires_at, updated_at)
          SELECT k, v, \(storedAt), \(expiresAt), clock_timestamp() FROM unnest(\(keyBuffers), \(valueBuffers)) AS u(k, v)
          ON CONFLICT (key_hash) DO UPDATE SET value = EXCLUDED.value, stored_at = EXCLUDED.stored_at,
            expires_at = EXCLUDED.expires_at, updated_at = EXCLUDED.updated_at
          RETURNING key)
        SELECT pg_notify(\(channel), \(node + " ") || \(unescaped: Self.keyPayload)) FROM written
        """
    }

    func delete(key: Data, channel: String, node: String) -> PostgresQuery {
      let key = ByteBuffer(bytes: key)
      return """
        WITH removed AS (DELETE FROM \(unescaped: table) WHERE key_hash = sha256(\(key)) AND key = \(key) RETURNING key)
        SELECT pg_notify(\(channel), \(node + " ") || \(unescaped: Self.keyPayload)) FROM removed
        """
    }

    func deleteAll(channel: String, node: String) -> PostgresQuery {
      "WITH removed AS (DELETE FROM \(unescaped: table)) SELECT pg_notify(\(channel), \(node + " *"))"
    }

    func deleteExpired(now: Date) -> PostgresQuery {
      """
      WITH removed AS (DELETE FROM \(unescaped: table) WHERE expires_at < \(now) RETURNING 1)
      SELECT count(*) FROM removed
      """
    }

    func deleteExpiredLeases() -> PostgresQuery {
      "DELETE FROM \(unescaped: leases) WHERE expires_at < clock_timestamp()"
    }

    /// Takes the lease of `key` for `holder` unless another holder's lease is still running;
    /// returns a row only when taken. Leases run on the server's clock, which every node shares.
    /// Idempotent: the holder itself takes its lease again (and renews it), so a statement sent
    /// again after a lost connection never locks out the holder that sent it.
    func acquireLease(key: Data, holder: String, milliseconds: Double) -> PostgresQuery {
      let key = ByteBuffer(bytes: key)
      return """
        INSERT INTO \(unescaped: leases) (key_hash, holder, expires_at)
        VALUES (sha256(\(key)), \(holder), clock_timestamp() + \(milliseconds) * interval '1 millisecond')
        ON CONFLICT (key_hash) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
        WHERE \(unescaped: leases).expires_at <= clock_timestamp() OR \(unescaped: leases).holder = EXCLUDED.holder
        RETURNING holder
        """
    }

    func releaseLease(key: Data, holder: String) -> PostgresQuery {
      let key = ByteBuffer(bytes: key)
      return "DELETE FROM \(unescaped: leases) WHERE key_hash = sha256(\(key)) AND holder = \(holder)"
    }
  }

  /// Creates and checks the tables of a PostgreSQL store (``PostgresStore``,
  /// ``PostgresOutboxStore``) inside the caller's transaction.
  enum PostgresSchema {
    /// Creates `tables` when missing, records `version` for `table` in `kiln_store_schema`
    /// (keeping a version already recorded), refuses a newer recorded version or a `table`
    /// without the `expected` columns (`information_schema` types), and only then runs
    /// `indexes`, so that a foreign table is left untouched.
    ///
    /// - Throws: ``PostgresStoreError/incompatibleTable(table:reason:)``; what the statements throw.
    static func prepare(
      _ table: String, creating tables: [PostgresQuery], version: Int, columns expected: [(String, String)],
      thenCreating indexes: [PostgresQuery], on connection: PostgresConnection
    ) async throws {
      // Concurrent CREATE TABLE IF NOT EXISTS of one table can collide, so each creation
      // holds a lock until its transaction ends. The registry is created once per database,
      // under a database-wide lock taken only while it is missing; each table under a lock of
      // its own, so that stores of other tables (a server starting many, the test suites) never
      // wait for one another, nor for a table that someone holds locked.
      let registry = try await LeasedStatement.run(
        "SELECT to_regclass('kiln_store_schema') IS NOT NULL", on: connection)
      var registryExists = false
      for row in registry.rows { registryExists = try row.decode(Bool.self) }
      if !registryExists {
        for statement: PostgresQuery in [
          "SELECT pg_advisory_xact_lock(7402319873)",
          """
          CREATE TABLE IF NOT EXISTS kiln_store_schema (
            table_name text PRIMARY KEY, version integer NOT NULL, created_at timestamptz NOT NULL DEFAULT now())
          """,
        ] {
          _ = try await LeasedStatement.run(statement, on: connection)
        }
      }
      // Two 32-bit keys: a lock space apart from the registry's 64-bit key.
      _ = try await LeasedStatement.run(
        "SELECT pg_advisory_xact_lock(740231987, hashtext(\(table)))", on: connection)
      for statement in tables { _ = try await LeasedStatement.run(statement, on: connection) }
      let versions = try await LeasedStatement.run(
        """
        INSERT INTO kiln_store_schema (table_name, version) VALUES (\(table), \(Int32(version)))
        ON CONFLICT (table_name) DO UPDATE SET table_name = EXCLUDED.table_name RETURNING version
        """, on: connection)
      var recorded = version
      for row in versions.rows { recorded = Int(try row.decode(Int32.self)) }
      guard recorded <= version else {
        throw PostgresStoreError.incompatibleTable(
          table: table, reason: "schema version \(recorded) is newer than \(version)")
      }
      let described = try await LeasedStatement.run(
        """
        SELECT column_name::text, data_type::text FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name = \(table)
        """, on: connection)
      var columns: [String: String] = [:]
      for row in described.rows {
        let (name, type) = try row.decode((String, String).self)
        columns[name] = type
      }
      for (name, type) in expected where columns[name] != type {
        throw PostgresStoreError.incompatibleTable(
          table: table, reason: "column \(name) is \(columns[name] ?? "missing"), not \(type)")
      }
      for statement in indexes { _ = try await LeasedStatement.run(statement, on: connection) }
    }
  }
#endif
