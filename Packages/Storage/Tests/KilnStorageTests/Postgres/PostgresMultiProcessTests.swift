#if PostgreSQL
  import Foundation
  import KilnTesting
  import PostgresNIO
  import Testing

  @testable import KilnStorage

  /// Several real processes (KilnPostgresChild) sharing one table.
  @Suite("PostgreSQL across processes", .serialized, .timeLimit(.minutes(3)))
  struct PostgresMultiProcessTests {
    private func children(_ count: Int, _ arguments: (Int) -> [String]) throws -> [ChildProcess] {
      let executable = try TestExecutable.locate("KilnPostgresChild")
      return try (0..<count).map { index in try ChildProcess(executable: executable, arguments: arguments(index)) }
    }

    private func expectLine(_ child: ChildProcess, _ prefix: String, timeout: Duration = .seconds(60)) async throws
      -> String
    {
      while let line = try await child.nextLine(timeout: timeout) {
        if line.hasPrefix(prefix) { return line }
        if line.hasPrefix("error") {
          Issue.record("child \(child.pid): \(line)")
          return line
        }
      }
      Issue.record("child \(child.pid) ended before writing \(prefix)")
      return ""
    }

    @Test("processes missing one key together load it from the origin once", arguments: [2, 4, 8])
    func oneOriginLoad(processes: Int) async throws {
      let url = try PostgresTestDatabase.url()
      let table = PostgresTestDatabase.tableName()
      try await withTemporaryDirectory { directory in
        let go = directory.appendingPathComponent("go").path
        let nodes = try children(processes) { _ in ["load", url, table, "shared-key", go] }
        defer { for node in nodes { node.kill() } }
        for node in nodes { _ = try await expectLine(node, "ready") }
        _ = FileManager.default.createFile(atPath: go, contents: nil)
        var loads = 0
        var values: Set<String> = []
        for node in nodes {
          let lines = try await node.linesToEnd(timeout: .seconds(60))
          loads += lines.filter { $0 == "loaded" }.count
          values.formUnion(lines.filter { $0.hasPrefix("value ") })
          let errors = lines.filter { $0.hasPrefix("error") }
          #expect(errors.isEmpty, "\(lines)")
          #expect(node.wait() == 0)
        }
        #expect(loads == 1)
        #expect(values.count == 1)
      }
    }

    @Test("a write in one process invalidates the memory tier of the others")
    func crossProcessInvalidation() async throws {
      let url = try PostgresTestDatabase.url()
      let table = PostgresTestDatabase.tableName()
      try await PostgresTestDatabase.withClient { client in
        let store = try await PostgresStore<String, String>(client: client, table: table)
        try await store.setValue("v1", forKey: "k", expiresAt: nil)
      }
      try await withTemporaryDirectory { directory in
        let go = directory.appendingPathComponent("go").path
        let nodes = try children(5) { index in ["cache", url, table, "k", go, index == 0 ? "v2" : "-"] }
        defer { for node in nodes { node.kill() } }
        for node in nodes { #expect(try await expectLine(node, "cached") == "cached v1") }
        _ = FileManager.default.createFile(atPath: go, contents: nil)
        #expect(try await expectLine(nodes[0], "wrote") == "wrote")
        for node in nodes.dropFirst() {
          #expect(try await expectLine(node, "invalidated") == "invalidated k")
          #expect(try await expectLine(node, "value") == "value v2")
          #expect(node.wait() == 0)
        }
      }
    }

    @Test("a process killed while holding a load lease blocks the key no longer than the lease")
    func killedLeaseHolder() async throws {
      let url = try PostgresTestDatabase.url()
      let table = PostgresTestDatabase.tableName()
      let holder = try children(1) { _ in ["hold", url, table, "k", "5000"] }[0]
      defer { holder.kill() }
      _ = try await expectLine(holder, "loading")
      holder.kill()
      try await PostgresTestDatabase.withClient { client in
        let store = try await PostgresStore<String, String>(client: client, table: table)
        // The dead holder's lease still runs: a short wait times out without loading.
        await #expect {
          try await store.value(forKey: "k", waitTimeout: .milliseconds(200)) { "too early" }
        } throws: { error in
          if case .loadWaitTimedOut = error as? PostgresStoreError { return true }
          return false
        }
        let started = ContinuousClock.now
        let value = try await store.value(forKey: "k", waitTimeout: .seconds(20)) { "taken over" }
        #expect(value == "taken over")
        #expect(ContinuousClock.now - started < .seconds(15))
      }
    }
  }
#endif
