#if PostgreSQL
  import Foundation
  import KilnTesting
  import PostgresNIO
  import Testing

  @testable import KilnStorage

  /// Servers that refuse, restart and time out. Each test runs its own throwaway cluster
  /// (through Scripts/lib/postgres.sh), since it stops and restarts it.
  @Suite(
    "PostgreSQL faults", .serialized, .timeLimit(.minutes(3)),
    .disabled("hangs: an operationTimeout does not end a call still waiting for a pool connection (to fix)"))
  struct PostgresFaultTests {
    private func withOwnCluster(_ body: (_ url: String, _ directory: String) async throws -> Void) async throws {
      let created = try PostgresTestDatabase.script("start").split(separator: " ").map(String.init)
      try #require(created.count == 2, "postgres.sh start printed \(created)")
      defer { _ = try? PostgresTestDatabase.script("stop", created[1]) }
      try await body(created[0], created[1])
    }

    private static func isConnectionError(_ error: any Error) -> Bool {
      switch error as? PostgresStoreError {
      case .connectionFailed, .timedOut: true
      default: false
      }
    }

    @Test("a server refusing connections is a typed error, and the same client works once it is back")
    func refusedAtStart() async throws {
      try await withOwnCluster { url, directory in
        try PostgresTestDatabase.script("halt", directory)
        try await PostgresTestDatabase.withClient(url: url) { client in
          let table = PostgresTestDatabase.tableName()
          await #expect {
            _ = try await PostgresStore<String, String>(client: client, table: table, operationTimeout: .seconds(2))
          } throws: { Self.isConnectionError($0) }
          try PostgresTestDatabase.script("resume", directory)
          let store = try await PostgresStore<String, String>(
            client: client, table: table, operationTimeout: .seconds(60))
          try await store.setValue("after", forKey: "k", expiresAt: nil)
          #expect(try await store.value(forKey: "k") == "after")
        }
      }
    }

    @Test("a restart in the middle of work fails only the operations in flight and loses no acknowledged write")
    func restartMidWork() async throws {
      try await withOwnCluster { url, directory in
        try await PostgresTestDatabase.withClient(url: url) { client in
          let store = try await PostgresStore<String, Int>(
            client: client, table: PostgresTestDatabase.tableName(), operationTimeout: .seconds(60))
          let started = AsyncCounter()
          let restart = Task.detached { () throws -> Void in
            await started.wait(untilAtLeast: 40)
            try PostgresTestDatabase.script("restart", directory)
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

    @Test("a statement timeout is a typed error, and the timed-out write is not committed")
    func statementTimeout() async throws {
      let table = PostgresTestDatabase.tableName()
      try await PostgresTestDatabase.withClient { locker in
        try await PostgresTestDatabase.withClient(configure: {
          $0.options.additionalStartupParameters = [("statement_timeout", "300")]
        }) { client in
          let store = try await PostgresStore<String, String>(client: client, table: table)
          let locked = Gate()
          let unlock = Gate()
          let holder = Task {
            try await locker.withTransaction(logger: Logger(label: "test")) { connection in
              try await connection.query(
                "LOCK TABLE \(unescaped: table) IN ACCESS EXCLUSIVE MODE", logger: Logger(label: "test"))
              locked.open()
              try await unlock.wait()
            }
          }
          try await locked.wait()
          await #expect {
            try await store.setValue("blocked", forKey: "k", expiresAt: nil)
          } throws: { error in
            if case .timedOut = error as? PostgresStoreError { return true }
            return false
          }
          await #expect {
            _ = try await store.value(forKey: "k")
          } throws: { error in
            if case .timedOut = error as? PostgresStoreError { return true }
            return false
          }
          unlock.open()
          try await holder.value
          #expect(try await store.value(forKey: "k") == nil)
          try await store.setValue("after", forKey: "k", expiresAt: nil)
          #expect(try await store.value(forKey: "k") == "after")
        }
      }
    }
  }
#endif
