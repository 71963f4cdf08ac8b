#if PostgreSQL
  import Foundation
  import KilnTesting
  import PostgresNIO
  import Testing
  import _KilnTestServer

  @testable import KilnStorage

  /// Faults on the wire between a process and PostgreSQL — a blackhole (a route that drops
  /// every packet: no answer, no reset) and resets — injected by a ``FaultProxy``, with two
  /// processes sharing one table: a child (KilnPostgresChild) whose connections go through the
  /// proxy, and the test process, connected directly, which writes, checks and loads.
  @Suite("PostgreSQL wire faults", .serialized, .timeLimit(.minutes(3)))
  struct PostgresWireFaultTests {
    /// How late past its configured limit a call may end on a loaded machine.
    static let slack: Int64 = 10_000

    /// A proxy in front of the tests' server, and its URL.
    private func withProxy(_ body: (FaultProxy, String) async throws -> Void) async throws {
      let url = try PostgresTestDatabase.url()
      var components = try #require(URLComponents(string: url))
      let proxy = try await FaultProxy.start(upstreamPort: try #require(components.port))
      components.port = proxy.port
      do {
        try await body(proxy, try #require(components.string))
      } catch {
        try? await proxy.stop()
        throw error
      }
      try await proxy.stop()
    }

    private func child(_ arguments: [String]) throws -> ChildProcess {
      try ChildProcess(executable: try TestExecutable.locate("KilnPostgresChild"), arguments: arguments)
    }

    /// The next line of `child` that starts with `prefix` (recording any error line on the way).
    private func expectLine(
      _ child: ChildProcess, _ prefix: String, timeout: Duration = .seconds(30),
      sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [String] {
      try await expectLines(child, [prefix], timeout: timeout, sourceLocation: sourceLocation)
    }

    /// Lines of `child` up to the one by which a line starting with each of `prefixes` was
    /// seen, in any order.
    private func expectLines(
      _ child: ChildProcess, _ prefixes: [String], timeout: Duration = .seconds(30),
      sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [String] {
      var missing = prefixes
      var seen: [String] = []
      do {
        while !missing.isEmpty, let line = try await child.nextLine(timeout: timeout) {
          seen.append(line)
          missing.removeAll { line.hasPrefix($0) }
        }
      } catch {
        Issue.record("\(error) after \(seen), waiting for \(missing)", sourceLocation: sourceLocation)
        throw error
      }
      if !missing.isEmpty {
        Issue.record("child ended before writing \(missing): \(seen)", sourceLocation: sourceLocation)
      }
      return seen
    }

    @Test(
      "writes through a blackhole and resets: every acknowledged write is stored, every failure says whether it may have landed, each within its time limit"
    )
    func writes() async throws {
      try await withProxy { proxy, proxiedURL in
        let table = PostgresTestDatabase.tableName()
        try await PostgresTestDatabase.withClient { client in
          _ = try await PostgresStore<String, String>(client: client, table: table)
        }
        let writer = try child(["writes", proxiedURL, table, "60"])
        defer { writer.kill() }
        _ = try await expectLine(writer, "ready")
        var lines = try await expectLine(writer, "ok 9 ")
        try await proxy.set(.blackhole)
        lines += try await expectLine(writer, "failed")
        lines += try await expectLine(writer, "failed")
        try await proxy.set(.normal)
        lines += try await expectLine(writer, "ok")
        lines += try await expectLine(writer, "ok")
        // Every response cut: the statements reach the server, their answers never come back.
        try await proxy.set(.reset(afterBytes: 0))
        lines += try await expectLine(writer, "failed")
        try await proxy.set(.normal)
        lines += try await expectLine(writer, "ok")
        // Statements cut while they are sent.
        try await proxy.set(.reset(afterBytes: 8, direction: .toUpstream))
        lines += try await expectLine(writer, "failed")
        try await proxy.set(.normal)
        lines += try await expectLine(writer, "done", timeout: .seconds(60))
        #expect(writer.wait() == 0)

        var acknowledged: [Int] = []
        var uncertain: [Int] = []
        for line in lines {
          let fields = line.split(separator: " ")
          if fields.first == "ok", let index = Int(fields[1]) { acknowledged.append(index) }
          if fields.first == "failed", let index = Int(fields[1]), let elapsed = Int64(fields[3]) {
            // Every write the store could not finish is an error that says its outcome is
            // unknown (the proxy may have passed it on), within the 1 s limit.
            #expect(fields[2] == "unknown", "\(line)")
            #expect(elapsed < 1_000 + Self.slack, "\(line)")
            uncertain.append(index)
          }
        }
        #expect(acknowledged.count + uncertain.count == 60, "\(lines)")
        #expect(uncertain.count >= 4)

        try await PostgresTestDatabase.withClient { client in
          let store = try await PostgresStore<String, String>(client: client, table: table)
          for index in acknowledged {
            #expect(try await store.value(forKey: "w\(index)") == "value-\(index)", "acknowledged w\(index) lost")
          }
          for index in uncertain {
            // Stored whole or not at all.
            let value = try await store.value(forKey: "w\(index)")
            #expect(value == nil || value == "value-\(index)")
          }
        }
      }
    }

    @Test(
      "reads through a blackhole and resets: each read is the latest value written or a typed error within its time limit, and the first read once the route is back sees what was written meanwhile"
    )
    func reads() async throws {
      try await withProxy { proxy, proxiedURL in
        let table = PostgresTestDatabase.tableName()
        try await PostgresTestDatabase.withClient { client in
          let store = try await PostgresStore<String, String>(client: client, table: table)
          try await store.setValue("v0", forKey: "k", expiresAt: nil)
          let reader = try child(["reads", proxiedURL, table, "k"])
          defer { reader.kill() }
          _ = try await expectLine(reader, "ready")
          var lines = try await expectLines(reader, ["ok 3 "])

          // One fault after the other, each with a write made meanwhile (directly, not
          // through the proxy): once the route is back, the first value read is that write.
          let faults: [(FaultProxy.Conditions, String)] = [
            (.blackhole, "v1"),
            (.reset(afterBytes: 0), "v2"),  // every answer cut
            (.reset(afterBytes: 8, direction: .toUpstream), "v3"),  // every statement cut
          ]
          for (fault, written) in faults {
            try await proxy.set(fault)
            lines += try await expectLine(reader, "failed")
            try await store.setValue(written, forKey: "k", expiresAt: nil)
            lines += try await expectLine(reader, "failed")
            try await proxy.set(.normal)
            let recovered = try await expectLine(reader, "ok")
            lines += recovered
            let first = try #require(recovered.last?.split(separator: " "))
            #expect(first[2] == written, "\(fault): read \(first[2]) once the route was back, not \(written)")
          }

          var failures = 0
          var latest = -1
          for line in lines {
            let fields = line.split(separator: " ")
            switch fields.first {
            case "ok":
              // Only values written, never an older one after a newer.
              let version = try #require(Int(fields[2].dropFirst()), "\(line)")
              #expect(fields[2].hasPrefix("v") && version >= latest, "\(line) after v\(latest)")
              latest = max(latest, version)
            case "failed":
              // A PostgresStoreError (the child ends on anything else), within the 1 s limit.
              failures += 1
              let elapsed = try #require(Int64(fields[2]), "\(line)")
              #expect(elapsed < 1_000 + Self.slack, "\(line)")
            default:
              Issue.record("unexpected line \(line)")
            }
          }
          #expect(failures >= 6)
          #expect(latest == 3)
        }
      }
    }

    @Test(
      "LISTEN through a blackhole: the node distrusts its memory within two heartbeats, then subscribes again and catches up; a reset does the same at once"
    )
    func listening() async throws {
      try await withProxy { proxy, proxiedURL in
        let table = PostgresTestDatabase.tableName()
        try await PostgresTestDatabase.withClient { client in
          let store = try await PostgresStore<String, String>(client: client, table: table)
          try await store.setValue("v1", forKey: "k", expiresAt: nil)
          let node = try child(["watch", proxiedURL, table, "k"])
          defer { node.kill() }
          // Subscribed, and v1 kept in memory.
          _ = try await expectLines(node, ["listening true 1", "value v1 memory"])

          // The route drops everything: the write below never reaches the node as a
          // notification, and its memory still says v1.
          try await proxy.set(.blackhole)
          let blackholed = ContinuousClock.now
          try await store.setValue("v2", forKey: "k", expiresAt: nil)
          _ = try await expectLine(node, "listening false")
          let detected = blackholed.duration(to: .now)
          // Two heartbeats of 300 ms, plus slack: never later.
          #expect(detected < .milliseconds(600 + Self.slack), "\(detected)")

          // Memory is not trusted any more: reads go to the table, which the blackhole cuts
          // off (errors), and the first value read once the route is back is v2, never v1.
          try await proxy.set(.normal)
          let caughtUp = try await expectLines(node, ["value", "listening true 2"])
          #expect(caughtUp.first { $0.hasPrefix("value") }?.hasPrefix("value v2 ") == true, "\(caughtUp)")

          // A reset of every connection (the LISTEN one included): a new subscription (the
          // third), and what was written meanwhile. The node polls its state every 20 ms, so
          // it may not see the short time it was not listening; the count shows it subscribed
          // again (with two builds and a TSan run loading the machine, 7 runs in 24 went from
          // "true 2" to "true 3" between two polls).
          proxy.resetConnections()
          try await store.setValue("v3", forKey: "k", expiresAt: nil)
          _ = try await expectLines(node, ["listening true 3", "value v3 "])
        }
      }
    }

    @Test(
      "a lease holder cut off mid-load: nobody else loads before its lease ends, and the next loader does not wait past it"
    )
    func leaseHolderCutOff() async throws {
      try await withProxy { proxy, proxiedURL in
        let table = PostgresTestDatabase.tableName()
        try await PostgresTestDatabase.withClient { client in
          let store = try await PostgresStore<String, String>(client: client, table: table)
          let holder = try child(["lease", proxiedURL, table, "k", "3000", "800"])
          defer { holder.kill() }
          _ = try await expectLine(holder, "ready")
          let loading = try await expectLine(holder, "loading").last.flatMap { Int64($0.split(separator: " ")[1]) }
          let started = try #require(loading)
          // Its connections go silent: it cannot store its value or give its lease back.
          try await proxy.set(.blackhole)

          let loads = Recorder<Int64>()
          let value = try await store.value(forKey: "k", lease: .seconds(3), waitTimeout: .seconds(30)) {
            loads.append(Int64(Date().timeIntervalSince1970 * 1_000))
            return "taken over"
          }
          let loadedAt = try #require(loads.values.first)
          #expect(value == "taken over")
          #expect(loads.values.count == 1)
          let holderLines = try await expectLine(holder, "loaded") + expectLine(holder, "error")
          let loaded = try #require(
            holderLines.first { $0.hasPrefix("loaded") }.flatMap { Int64($0.split(separator: " ")[1]) })
          // Never two loads at once: ours started after the holder's ended, and after its
          // lease (3 s from its start) ran out…
          #expect(loadedAt >= loaded, "holder loaded at \(loaded), we loaded at \(loadedAt)")
          #expect(loadedAt >= started + 2_900, "took over \(loadedAt - started) ms after the holder started")
          // …but not much later: the wait ends with the lease.
          #expect(loadedAt < started + 3_000 + Self.slack, "took over \(loadedAt - started) ms after it started")
          try await proxy.set(.normal)
        }
      }
    }
  }
#endif
