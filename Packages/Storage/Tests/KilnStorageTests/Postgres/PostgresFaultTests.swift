#if PostgreSQL
  import Foundation
  import KilnTesting
  import PostgresNIO
  import Testing

  @testable import KilnStorage

  /// Servers that refuse, go away, restart and time out. Each test that stops the server runs
  /// its own throwaway cluster (through Scripts/lib/postgres.sh).
  ///
  /// Every call that can meet a dead server runs with an `operationTimeout`, and the tests
  /// check that the typed error arrives near that limit: postgres-nio's pool would otherwise
  /// hold the call until its circuit breaker trips, a minute later.
  @Suite("PostgreSQL faults", .serialized, .timeLimit(.minutes(3)))
  struct PostgresFaultTests {
    /// How late past its limit a timed-out call may return on a loaded machine: far less
    /// than the pool's one-minute circuit breaker, or a lock that is never released.
    private static let slack = Duration.seconds(20)

    private func withOwnCluster(_ body: (_ url: String, _ directory: String) async throws -> Void) async throws {
      let created = try await PostgresTestDatabase.script("start").split(separator: " ").map(String.init)
      try #require(created.count == 2, "postgres.sh start printed \(created)")
      do {
        try await body(created[0], created[1])
      } catch {
        _ = try? await PostgresTestDatabase.script("stop", created[1])
        throw error
      }
      _ = try? await PostgresTestDatabase.script("stop", created[1])
    }

    private static func isConnectionError(_ error: any Error) -> Bool {
      switch error as? PostgresStoreError {
      case .connectionFailed, .timedOut: true
      default: false
      }
    }

    private static func isTimeout(_ error: any Error) -> Bool {
      if case .timedOut = error as? PostgresStoreError { return true }
      return false
    }

    /// Runs `body`, expecting it to throw a connection error within `limit` (plus slack).
    private static func expectConnectionError(
      within limit: Duration, sourceLocation: SourceLocation = #_sourceLocation,
      _ body: () async throws -> Void
    ) async {
      let started = ContinuousClock.now
      await #expect(sourceLocation: sourceLocation) {
        try await body()
      } throws: { isConnectionError($0) }
      let elapsed = started.duration(to: .now)
      #expect(elapsed < limit + slack, "took \(elapsed)", sourceLocation: sourceLocation)
    }

    @Test(
      "a server refusing connections is a typed error within the time limit, and the same client works once it is back",
      .timeLimit(.minutes(2)))
    func refusedAtStart() async throws {
      try await withOwnCluster { url, directory in
        try await PostgresTestDatabase.script("halt", directory)
        try await PostgresTestDatabase.withClient(url: url) { client in
          let table = PostgresTestDatabase.tableName()
          await Self.expectConnectionError(within: .seconds(2)) {
            _ = try await PostgresStore<String, String>(client: client, table: table, operationTimeout: .seconds(2))
          }
          try await PostgresTestDatabase.script("resume", directory)
          let store = try await PostgresStore<String, String>(
            client: client, table: table, operationTimeout: .seconds(60))
          try await store.setValue("after", forKey: "k", expiresAt: nil)
          #expect(try await store.value(forKey: "k") == "after")
        }
      }
    }

    @Test(
      "a server that goes away fails each call within its limit, withdrawn writes never land, and the client reconnects",
      .timeLimit(.minutes(2)))
    func outageMidWork() async throws {
      try await withOwnCluster { url, directory in
        try await PostgresTestDatabase.withClient(url: url) { client in
          let table = PostgresTestDatabase.tableName()
          let store = try await PostgresStore<String, String>(
            client: client, table: table, operationTimeout: .seconds(2))
          try await store.setValue("kept", forKey: "before", expiresAt: nil)
          try await PostgresTestDatabase.script("halt", directory)

          // Several rounds: the first calls may meet the dropped connection, the later ones
          // wait in the pool's queue until their time runs out.
          for round in 0..<3 {
            await Self.expectConnectionError(within: .seconds(2)) {
              try await store.setValue("ghost", forKey: "ghost-\(round)", expiresAt: nil)
            }
            await Self.expectConnectionError(within: .seconds(2)) {
              _ = try await store.value(forKey: "before")
            }
          }
          try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<8 {
              group.addTask {
                await Self.expectConnectionError(within: .seconds(2)) {
                  try await store.setValue("ghost", forKey: "ghost-concurrent-\(writer)", expiresAt: nil)
                }
              }
            }
            try await group.waitForAll()
          }

          try await PostgresTestDatabase.script("resume", directory)
          let reconnected = try await PostgresStore<String, String>(
            client: client, table: table, operationTimeout: .seconds(60))
          #expect(try await reconnected.value(forKey: "before") == "kept")
          try await reconnected.setValue("after", forKey: "after", expiresAt: nil)
          #expect(try await store.value(forKey: "after") == "after")
          // Not one of the writes that failed while the server was away ran later.
          #expect(try await reconnected.count == 2)
        }
      }
    }

    @Test(
      "a restart in the middle of work fails only the operations in flight and loses no acknowledged write",
      .timeLimit(.minutes(2)))
    func restartMidWork() async throws {
      try await withOwnCluster { url, directory in
        try await PostgresTestDatabase.withClient(url: url) { client in
          let store = try await PostgresStore<String, Int>(
            client: client, table: PostgresTestDatabase.tableName(), operationTimeout: .seconds(10))
          let started = AsyncCounter()
          let restart = Task.detached { () throws -> Void in
            await started.wait(untilAtLeast: 40)
            try await PostgresTestDatabase.script("restart", directory)
          }
          let outcomes = try await withThrowingTaskGroup(of: [(String, Bool)].self) { group in
            for writer in 0..<4 {
              group.addTask {
                var outcomes: [(String, Bool)] = []
                for index in 0..<60 {
                  let key = "w\(writer)-\(index)"
                  started.increment()
                  do {
                    try await store.setValue(index, forKey: key, expiresAt: nil)
                    outcomes.append((key, true))
                  } catch {
                    #expect(Self.isConnectionError(error), "\(error)")
                    outcomes.append((key, false))
                  }
                }
                return outcomes
              }
            }
            var all: [(String, Bool)] = []
            for try await outcomes in group { all += outcomes }
            return all
          }
          try await restart.value
          #expect(outcomes.count == 240)
          for (key, acknowledged) in outcomes where acknowledged {
            let index = Int(key.split(separator: "-")[1])!
            #expect(try await store.value(forKey: key) == index, "acknowledged write \(key) lost")
          }
          // Reconnected without restarting anything here.
          try await store.setValue(1, forKey: "after", expiresAt: nil)
          #expect(try await store.value(forKey: "after") == 1)
        }
      }
    }

    @Test("a statement timeout is a typed error, and the timed-out write is not committed", .timeLimit(.minutes(2)))
    func statementTimeout() async throws {
      let table = PostgresTestDatabase.tableName()
      // Every statement of the store's client ends after 300 ms on the server.
      let shortStatements: (inout PostgresClient.Configuration) -> Void = {
        $0.options.additionalStartupParameters = [("statement_timeout", "300")]
      }
      try await PostgresTestDatabase.withClient(configure: shortStatements) { client in
        let store = try await PostgresStore<String, String>(client: client, table: table)
        try await PostgresTestDatabase.whileLocked(table) {
          await #expect {
            try await store.setValue("blocked", forKey: "k", expiresAt: nil)
          } throws: { Self.isTimeout($0) }
          await #expect {
            _ = try await store.value(forKey: "k")
          } throws: { Self.isTimeout($0) }
        }
        #expect(try await store.value(forKey: "k") == nil)
        try await store.setValue("after", forKey: "k", expiresAt: nil)
        #expect(try await store.value(forKey: "k") == "after")
      }
    }

    @Test(
      "the operation timeout returns at its limit while the statement is still blocked on the server",
      .timeLimit(.minutes(2)))
    func operationTimeoutWhileBlocked() async throws {
      let table = PostgresTestDatabase.tableName()
      try await PostgresTestDatabase.withClient { client in
        let store = try await PostgresStore<String, String>(client: client, table: table, operationTimeout: .seconds(1))
        try await PostgresTestDatabase.whileLocked(table) {
          // The lock is held until this closure returns: only the store's own limit ends these.
          let started = ContinuousClock.now
          await #expect {
            try await store.setValue("late", forKey: "k", expiresAt: nil)
          } throws: { Self.isTimeout($0) }
          await #expect {
            _ = try await store.value(forKey: "k")
          } throws: { Self.isTimeout($0) }
          let elapsed = started.duration(to: .now)
          #expect(elapsed < .seconds(2) + Self.slack, "took \(elapsed)")
        }
        // The timed-out write reached the server: committed in full once the lock went, or not at all.
        let late = try await store.value(forKey: "k")
        #expect(late == nil || late == "late")
        try await store.setValue("after", forKey: "other", expiresAt: nil)
        #expect(try await store.value(forKey: "other") == "after")
      }
    }
  }
#endif
