#if PostgreSQL
  import Foundation
  import KilnTesting
  import PostgresNIO
  import Testing
  import _KilnSynchronization
  import _KilnTestServer

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

    @Test(
      "gateway processes sharing one HTTP cache on PostgreSQL send one request per URL to the origin; the others get its response, collapsed",
      arguments: [2, 4])
    func oneOriginRequest(processes: Int) async throws {
      let url = try PostgresTestDatabase.url()
      let table = PostgresTestDatabase.tableName()
      // A slow origin: the first request is still in flight when every process has missed.
      let origin = try await TestServer.start { _ in
        try? await Task.sleep(for: .milliseconds(800))
        return TestResponse(status: 200, headers: [("Cache-Control", "max-age=60")], body: Array("feed".utf8))
      }
      try await withTemporaryDirectory { directory in
        let go = directory.appendingPathComponent("go").path
        let nodes = try children(processes) { _ in
          ["http", url, table, origin.url("/feed").absoluteString, go, "30000"]
        }
        defer { for node in nodes { node.kill() } }
        for node in nodes { _ = try await expectLine(node, "ready") }
        _ = FileManager.default.createFile(atPath: go, contents: nil)
        var statuses: [String] = []
        for node in nodes {
          #expect(try await expectLine(node, "status") == "status 200 feed")
          statuses.append(try await expectLine(node, "cache-status"))
          #expect(node.wait() == 0)
        }
        #expect(origin.requests.count == 1, "\(statuses)")
        #expect(statuses.filter { $0.contains("; stored") }.count == 1, "\(statuses)")
        // The others waited for it (collapsed), or, started late on a busy machine, found it
        // stored (a hit); at least one waited.
        let collapsed = statuses.filter { $0.contains("; collapsed") }.count
        #expect(collapsed + statuses.filter { $0.contains("; hit") }.count == processes - 1, "\(statuses)")
        #expect(collapsed >= 1, "\(statuses)")
      }
      try await origin.stop()
    }

    @Test(
      "a gateway process killed while it asks the origin holds the URL no longer than its lease: another takes over")
    func killedGatewayHolder() async throws {
      let url = try PostgresTestDatabase.url()
      let table = PostgresTestDatabase.tableName()
      // The first request never gets an answer; the next one does.
      let answered = KilnMutex(0)
      let released = KilnMutex(false)
      defer { released.withLock { $0 = true } }
      let origin = try await TestServer.start { _ in
        let call = answered.withLock {
          $0 += 1
          return $0
        }
        if call == 1 {
          while !released.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(10)) }
          return .status(503)
        }
        return TestResponse(status: 200, headers: [("Cache-Control", "max-age=60")], body: Array("after".utf8))
      }
      try await withTemporaryDirectory { directory in
        let go = directory.appendingPathComponent("go").path
        let nodes = try children(3) { _ in ["http", url, table, origin.url("/feed").absoluteString, go, "3000"] }
        defer { for node in nodes { node.kill() } }
        for node in nodes { _ = try await expectLine(node, "ready") }
        _ = FileManager.default.createFile(atPath: go, contents: nil)
        #expect(await poll(timeout: .seconds(30)) { origin.requests.count == 1 })
        let holderPID = try #require(origin.requests.first?.headers["x-child"].flatMap { Int32($0) })
        let holder = try #require(nodes.first { $0.pid == holderPID })
        holder.kill()
        let others = nodes.filter { $0.pid != holderPID }
        var statuses: [String] = []
        for node in others {
          #expect(try await expectLine(node, "status") == "status 200 after")
          statuses.append(try await expectLine(node, "cache-status"))
          #expect(node.wait() == 0)
        }
        #expect(origin.requests.count == 2, "one request from the dead holder, one from the process that took over")
        #expect(statuses.filter { $0.contains("; stored") }.count == 1, "\(statuses)")
        #expect(statuses.filter { $0.contains("; collapsed") }.count == 1, "\(statuses)")
      }
      released.withLock { $0 = true }
      try await origin.stop()
    }
  }
#endif
