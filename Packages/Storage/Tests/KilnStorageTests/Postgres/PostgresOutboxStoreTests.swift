#if PostgreSQL
  import Foundation
  import KilnTesting
  import Logging
  import PostgresNIO
  import Testing
  import _KilnTestServer

  @testable import KilnStorage

  /// What only `PostgresOutboxStore` shows, on the tests' real server: many instances on one
  /// table, a new instance after a restart, damaged bytes in a row, sessions ended and locks
  /// held under a call, cancellation, and bad tables. `OutboxStoreTests` runs the protocol's
  /// behaviour against it too.
  @Suite("PostgresOutboxStore", .timeLimit(.minutes(2)))
  struct PostgresOutboxStoreTests {
    static func record(_ scope: String, _ change: String) -> OutboxRecord {
      OutboxStoreTests.record(scope, change)
    }

    /// A pool of one connection.
    static func oneConnection(_ configuration: inout PostgresClient.Configuration) {
      configuration.options.maximumConnections = 1
    }

    static func count(_ table: String, on client: PostgresClient) async throws -> Int {
      var count = 0
      for try await value in try await client.query("SELECT count(*) FROM \(unescaped: table)").decode(Int64.self) {
        count = Int(value)
      }
      return count
    }

    @Test("the same records appended through two stores at once are each stored once, with one sequence")
    func appendsThroughTwoStores() async throws {
      try await PostgresTestDatabase.withClient { client in
        let table = PostgresTestDatabase.tableName()
        let first = try await PostgresOutboxStore(client: client, table: table)
        let second = try await PostgresOutboxStore(client: client, table: table)
        let records = (0..<200).map { Self.record("s\($0 % 8)", "\($0)") }
        let sequences = try await withThrowingTaskGroup(of: (Int, UInt64).self) { group in
          for (index, record) in records.enumerated() {
            group.addTask { (index, try await first.append(record)) }
            group.addTask { (index, try await second.append(record)) }
          }
          var sequences: [Int: Set<UInt64>] = [:]
          for try await (index, sequence) in group { sequences[index, default: []].insert(sequence) }
          return sequences
        }
        #expect(sequences.values.allSatisfy { $0.count == 1 }, "each record has one sequence, whichever store")
        let loaded = OutboxStoreTests.entries(try await second.loadAll())
        #expect(loaded.count == records.count)
        #expect(Set(loaded.map(\.record)) == Set(records))
        #expect(try await Self.count(table, on: client) == records.count)
      }
    }

    @Test("entries, attempts and the quarantine survive a new store on the table; sequences go on growing")
    func newStoreOnTheTable() async throws {
      try await PostgresTestDatabase.withClient { client in
        let table = PostgresTestDatabase.tableName()
        let store = try await PostgresOutboxStore(client: client, table: table)
        let kept = try await store.append(Self.record("a", "1"))
        let moved = try await store.append(Self.record("b", "2"))
        let removed = try await store.append(Self.record("c", "3"))
        try await store.recordFailure(kept, attempts: 4, error: "HTTP 503 \0 with a NUL")
        try await store.quarantine(moved, reason: "by hand")
        try await store.remove([removed])
        await store.close()

        let reopened = try await PostgresOutboxStore(client: client, table: table)
        let entries = OutboxStoreTests.entries(try await reopened.loadAll())
        #expect(entries.map(\.sequence) == [kept])
        #expect(entries.first?.attempts == 4)
        #expect(entries.first?.lastError == "HTTP 503 \u{FFFD} with a NUL")
        #expect(try await reopened.quarantined().map(\.sequence) == [moved])
        #expect(try await reopened.append(Self.record("d", "4")) > removed)
      }
    }

    @Test("a byte changed in a stored record loads as damaged, the others intact; quarantine keeps the bytes")
    func damagedRow() async throws {
      try await PostgresTestDatabase.withClient { client in
        let table = PostgresTestDatabase.tableName()
        let store = try await PostgresOutboxStore(client: client, table: table)
        let before = try await store.append(Self.record("a", "before"))
        let damaged = try await store.append(Self.record("b", "damaged"))
        let after = try await store.append(Self.record("c", "after"))
        try await client.query(
          """
          UPDATE \(unescaped: table) SET record = set_byte(record, 40, get_byte(record, 40) # 1)
          WHERE seq = \(Int64(damaged))
          """)
        let loads = try await store.loadAll()
        #expect(loads.map(\.sequence) == [before, damaged, after])
        guard case .damaged(let damage) = loads[1] else {
          Issue.record("expected the middle entry damaged: \(loads[1])")
          return
        }
        #expect(damage.channel == "notes" && damage.param == Data("param:b".utf8))
        #expect(damage.reason == OutboxEnvelope.Damage.checksumMismatch.description)
        #expect(
          OutboxStoreTests.entries(loads).map(\.record) == [Self.record("a", "before"), Self.record("c", "after")])
        // The columns beside a record are checked against it too.
        try await client.query("UPDATE \(unescaped: table) SET param = '\\x00'::bytea WHERE seq = \(Int64(after))")
        guard case .damaged(let disagreeing) = try await store.loadAll()[2] else {
          Issue.record("expected the last entry damaged")
          return
        }
        #expect(disagreeing.reason == OutboxEnvelope.Damage.columnsDisagree.description)

        try await store.quarantine(damaged, reason: damage.reason)
        let quarantined = try #require(try await store.quarantined().first)
        if case .failure(.checksumMismatch) = OutboxEnvelope.decode(quarantined.storedBytes) {
        } else {
          Issue.record("the quarantine should keep the damaged bytes as they were")
        }
      }
    }

    @Test("an append whose session is ended while it waits is sent again on another connection, and stored once")
    func sessionEndedUnderAnAppend() async throws {
      try await PostgresTestDatabase.withClient { client in
        let table = PostgresTestDatabase.tableName()
        let store = try await PostgresOutboxStore(client: client, table: table)
        let record = Self.record("a", "1")
        let waiting = "%INSERT INTO \"\(table)\"%"
        var append: Task<UInt64, any Error>?
        try await PostgresTestDatabase.whileLocked(table) {
          append = Task { try await store.append(record) }
          // The append waits for the lock; end its session.
          var ended = 0
          while ended == 0 {
            try await Task.sleep(for: .milliseconds(10))
            let rows = try await client.query(
              """
              SELECT pg_terminate_backend(pid) FROM pg_stat_activity
              WHERE wait_event_type = 'Lock' AND query LIKE \(waiting)
              """)
            for try await _ in rows { ended += 1 }
          }
          #expect(ended == 1)
        }
        let sequence = try #require(try await append?.value)
        #expect(OutboxStoreTests.entries(try await store.loadAll()).map(\.record) == [record])
        #expect(try await store.append(record) == sequence)
        #expect(try await Self.count(table, on: client) == 1)
      }
    }

    enum Write: String, CaseIterable, Sendable {
      case append, replace, recordFailure, quarantine, remove
    }

    @Test(
      "a write whose answer is lost after it committed is sent again on another connection and done once",
      arguments: Write.allCases)
    func answerLostAfterCommit(write: Write) async throws {
      let url = try PostgresTestDatabase.url()
      var components = try #require(URLComponents(string: url))
      let proxy = try await FaultProxy.start(upstreamPort: try #require(components.port))
      components.port = proxy.port
      let table = PostgresTestDatabase.tableName()
      // One connection, through the proxy: the one the write is sent on.
      try await PostgresTestDatabase.withClient(url: components.string, configure: Self.oneConnection) { client in
        let store = try await PostgresOutboxStore(client: client, table: table)
        let first = try await store.append(Self.record("a", "1"))
        let record = Self.record("a", "2")
        // The server commits before it sends anything back (it flushes its answers at the
        // end of the statement); the first byte back resets the connection. The retry's
        // new connections go through.
        proxy.set(.normal, forNextConnections: 10)
        try await proxy.set(.reset(afterBytes: 1))
        switch write {
        case .append:
          let sequence = try await store.append(record)
          #expect(sequence > first)
        case .replace:
          try await store.replace(first, with: record)
        case .recordFailure:
          try await store.recordFailure(first, attempts: 3, error: "503")
        case .quarantine:
          try await store.quarantine(first, reason: "by hand")
        case .remove:
          try await store.remove([first])
        }
        try await proxy.set(.normal)
        #expect(proxy.statistics.resets >= 1, "the answer was lost")
        let entries = OutboxStoreTests.entries(try await store.loadAll())
        switch write {
        case .append: #expect(entries.map(\.record) == [Self.record("a", "1"), record])
        case .replace: #expect(entries.map(\.record) == [record])
        case .recordFailure: #expect(entries.map(\.attempts) == [3])
        case .quarantine:
          #expect(entries.isEmpty)
          #expect(try await store.quarantined().map(\.sequence) == [first])
        case .remove: #expect(entries.isEmpty)
        }
      }
      try await proxy.stop()
    }

    @Test("an append past the operation timeout fails, may be appended again, and is stored once")
    func operationTimeout() async throws {
      try await PostgresTestDatabase.withClient { client in
        let table = PostgresTestDatabase.tableName()
        // The short limit is for the blocked append; creating the table, and appending again
        // once the lock is gone, go through a store with the default limit, which a busy
        // server (the other suites run meanwhile) does not reach.
        let patient = try await PostgresOutboxStore(client: client, table: table)
        let store = try await PostgresOutboxStore(client: client, table: table, operationTimeout: .seconds(3))
        let record = Self.record("a", "1")
        try await PostgresTestDatabase.whileLocked(table) {
          let error = await #expect(throws: OutboxStoreError.self) { _ = try await store.append(record) }
          guard case .failed(let cause)? = error, let cause = cause as? PostgresStoreError, cause.isOutcomeUnknown
          else {
            Issue.record("expected a timeout whose outcome is unknown: \(String(describing: error))")
            return
          }
        }
        let sequence = try await patient.append(record)
        #expect(try await patient.append(record) == sequence)
        #expect(try await Self.count(table, on: client) == 1)
      }
    }

    @Test("a store's schema preparation waits for no other table's: one stalled leaves the others free")
    func schemaPreparationPerTable() async throws {
      try await PostgresTestDatabase.withClient { client in
        let stalledTable = PostgresTestDatabase.tableName()
        _ = try await PostgresOutboxStore(client: client, table: stalledTable)
        // Another session holds the table's row in the schema registry: preparing that table
        // again waits for it, inside its transaction.
        let held = Gate()
        let release = Gate()
        let holder = Task {
          try await client.withTransaction(logger: Logger(label: "test")) { connection in
            _ = try await connection.query(
              "SELECT 1 FROM kiln_store_schema WHERE table_name = \(stalledTable) FOR UPDATE",
              logger: Logger(label: "test"))
            held.open()
            try await release.wait()
          }
        }
        try await held.wait()
        let stalled = Task { try await PostgresOutboxStore(client: client, table: stalledTable) }
        var waiting = 0
        while waiting == 0 {
          try await Task.sleep(for: .milliseconds(10))
          let rows = try await client.query(
            """
            SELECT 1 FROM pg_stat_activity
            WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO kiln_store_schema%'
            """)
          for try await _ in rows { waiting += 1 }
        }
        // Meanwhile another table's store opens: under one database-wide lock it would wait
        // for the stalled preparation, past its limit.
        let other = try await PostgresOutboxStore(
          client: client, table: PostgresTestDatabase.tableName(), operationTimeout: .seconds(5))
        #expect(try await other.loadAll().isEmpty)
        release.open()
        try await holder.value
        _ = try await stalled.value
      }
    }

    @Test("a cancelled append still completes, even while it waits for a connection: the user's write is kept")
    func cancelledAppendCompletes() async throws {
      // One connection in the pool, held below: the append waits for it when it is cancelled,
      // where a call that followed its caller's cancellation would give up.
      try await PostgresTestDatabase.withClient(configure: Self.oneConnection) { client in
        let table = PostgresTestDatabase.tableName()
        let store = try await PostgresOutboxStore(client: client, table: table)
        let record = Self.record("a", "1")
        let held = Gate()
        let release = Gate()
        let holder = Task {
          try await client.withConnection { _ in
            held.open()
            try await release.wait()
          }
        }
        try await held.wait()
        let append = Task { try await store.append(record) }
        try await Task.sleep(for: .milliseconds(100))
        append.cancel()
        try await Task.sleep(for: .milliseconds(100))
        release.open()
        try await holder.value
        let sequence = try await append.value
        #expect(OutboxStoreTests.entries(try await store.loadAll()).map(\.sequence) == [sequence])
      }
    }

    @Test("a record over the size limit, and any call on a closed store, are typed errors that write nothing")
    func limitsAndClosing() async throws {
      try await PostgresTestDatabase.withClient { client in
        let table = PostgresTestDatabase.tableName()
        let store = try await PostgresOutboxStore(client: client, table: table, maximumRecordBytes: 1_024)
        var large = Self.record("a", "1")
        large.change = Data(repeating: 7, count: 2_000)
        let error = await #expect(throws: OutboxStoreError.self) { _ = try await store.append(large) }
        guard case .recordTooLarge(let size, 1_024)? = error else {
          Issue.record("\(String(describing: error))")
          return
        }
        #expect(size > 2_000)
        let sequence = try await store.append(Self.record("a", "small"))
        let replaced = await #expect(throws: OutboxStoreError.self) { try await store.replace(sequence, with: large) }
        guard case .recordTooLarge? = replaced else {
          Issue.record("\(String(describing: replaced))")
          return
        }
        await store.close()
        for call in [
          { _ = try await store.append(Self.record("b", "1")) }, { _ = try await store.loadAll() },
          { try await store.remove([sequence]) },
        ] as [@Sendable () async throws -> Void] {
          let closed = await #expect(throws: OutboxStoreError.self) { try await call() }
          guard case .closed? = closed else {
            Issue.record("\(String(describing: closed))")
            return
          }
        }
        #expect(try await Self.count(table, on: client) == 1)
      }
    }

    @Test("a bad table name, a foreign table and a newer schema are refused, and the table is left as it is")
    func badTables() async throws {
      try await PostgresTestDatabase.withClient { client in
        await #expect {
          _ = try await PostgresOutboxStore(client: client, table: "x; DROP TABLE y")
        } throws: { error in
          if case .invalidTableName = error as? PostgresStoreError { return true }
          return false
        }
        let foreign = PostgresTestDatabase.tableName()
        try await client.query("CREATE TABLE \(unescaped: foreign) (seq bigint PRIMARY KEY, note text)")
        try await client.query("INSERT INTO \(unescaped: foreign) VALUES (1, 'mine')")
        await #expect {
          _ = try await PostgresOutboxStore(client: client, table: foreign)
        } throws: { error in
          if case .incompatibleTable(foreign, _) = error as? PostgresStoreError { return true }
          return false
        }
        #expect(try await Self.count(foreign, on: client) == 1)

        let newer = PostgresTestDatabase.tableName()
        _ = try await PostgresOutboxStore(client: client, table: newer)
        try await client.query("UPDATE kiln_store_schema SET version = 2 WHERE table_name = \(newer)")
        await #expect {
          _ = try await PostgresOutboxStore(client: client, table: newer)
        } throws: { error in
          if case .incompatibleTable(newer, _) = error as? PostgresStoreError { return true }
          return false
        }
      }
    }

    @Test("the sender lock is one session's: another client is refused and told which, until that session ends")
    func senderLockAcrossClients() async throws {
      let table = PostgresTestDatabase.tableName()
      try await PostgresTestDatabase.withClient { other in
        let elsewhere = try await PostgresOutboxStore(client: other, table: table)
        let (lease, pid) = try await PostgresTestDatabase.withClient { client in
          let store = try await PostgresOutboxStore(client: client, table: table)
          guard case .acquired(let lease) = try await store.lockSender() else {
            throw TestError("the first lock should be granted")
          }
          var pid: Int32 = 0
          for try await value in try await client.query(
            """
            SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2
            AND objid::bigint = (hashtext(current_schema() || '.' || \(table))::bigint & 4294967295)
            """
          ).decode(Int32.self) {
            pid = value
          }
          guard case .held(let holder) = try await elsewhere.lockSender() else {
            throw TestError("another client should be refused")
          }
          #expect(holder.hasPrefix("PostgreSQL session \(pid) ("), "\(holder)")
          return (lease, pid)
        }
        // The first client shut down with the lease unreleased: its session, and the lock, ended.
        #expect(pid != 0)
        #expect(
          try await OutboxStoreTests.locksSoon(elsewhere, attempts: 200, every: .milliseconds(20)),
          "the lock of an ended session should be free")
        withExtendedLifetime(lease) {}
      }
    }

    @Test("a full disk on the server is storageFull; another server error is failed with its code")
    func errorMapping() {
      guard case .storageFull = PostgresOutboxStore.outboxError(PostgresStoreError.server(code: "53100", message: ""))
      else {
        Issue.record("53100 should be storageFull")
        return
      }
      guard
        case .failed(let cause) = PostgresOutboxStore.outboxError(PostgresStoreError.server(code: "42P01", message: "")),
        case .server(code: "42P01", _)? = cause as? PostgresStoreError
      else {
        Issue.record("another server error should be failed with its code")
        return
      }
    }
  }
#endif
