#if PostgreSQL
  import Foundation
  import KilnTesting
  import PostgresNIO
  import Testing

  @testable import KilnStorage

  @Suite("PostgresStore single flight", .timeLimit(.minutes(2)))
  struct PostgresSingleFlightTests {
    @Test("callers on many stores missing one key together load it once", arguments: [2, 8])
    func oneLoad(callers: Int) async throws {
      try await PostgresTestDatabase.withClient { client in
        let table = PostgresTestDatabase.tableName()
        let clock = ManualClock()
        var stores: [PostgresStore<String, String>] = []
        // No operation time limit: its timers would sleep on the manual clock beside the
        // lease waits this test counts and advances.
        for _ in 0..<callers {
          stores.append(try await PostgresStore(client: client, table: table, operationTimeout: nil, clock: clock))
        }
        let loads = AsyncCounter()
        let gate = Gate()
        let values = try await withThrowingTaskGroup(of: String.self) { group in
          for store in stores {
            group.addTask {
              try await store.value(forKey: "k", pollInterval: .milliseconds(5)) {
                loads.increment()
                try await gate.wait()
                return "loaded"
              }
            }
          }
          // Every other caller has missed and waits (sleeping on the clock) while the one
          // load is held open.
          await loads.wait(untilAtLeast: 1)
          await clock.waitForSleepers(count: callers - 1)
          gate.open()
          // Time moves whenever a waiter sleeps until its poll, however late it gets there: a
          // waiter still in a statement when the test looked would otherwise sleep forever.
          let ticker = Task {
            while !Task.isCancelled {
              await clock.waitForSleepers()
              if Task.isCancelled { return }
              clock.advance(by: .milliseconds(5))
            }
          }
          defer { ticker.cancel() }
          var values: [String] = []
          for try await value in group { values.append(value) }
          return values
        }
        #expect(values == Array(repeating: "loaded", count: callers))
        #expect(loads.value == 1)
        // Counted where each call ended: one load, every other caller joined it.
        let statistics = stores.map(\.singleFlightStatistics)
        #expect(statistics.map(\.loaded).reduce(0, +) == 1)
        #expect(statistics.map(\.joined).reduce(0, +) == callers - 1)
        #expect(statistics.map { $0.found + $0.takeovers + $0.failed + $0.timedOut + $0.cancelled }.reduce(0, +) == 0)
      }
    }

    @Test("a stored value is returned without loading")
    func hit() async throws {
      try await PostgresTestDatabase.withClient { client in
        let store = try await PostgresStore<String, String>(client: client, table: PostgresTestDatabase.tableName())
        try await store.setValue("stored", forKey: "k", expiresAt: nil)
        let value = try await store.value(forKey: "k") {
          Issue.record("loaded a stored key")
          return "loaded"
        }
        #expect(value == "stored")
        #expect(store.singleFlightStatistics.found == 1)
        #expect(
          counterValue(store.counterReadings(), "kiln_postgres_store_single_flight_total", [("outcome", "found")]) == 1)
      }
    }

    @Test("a failed load gives the lease back: the next caller loads")
    func failedLoad() async throws {
      try await PostgresTestDatabase.withClient { client in
        let store = try await PostgresStore<String, String>(client: client, table: PostgresTestDatabase.tableName())
        await #expect(throws: TestError("origin down")) {
          try await store.value(forKey: "k") { throw TestError("origin down") }
        }
        #expect(try await store.value(forKey: "k", waitTimeout: .zero) { "second" } == "second")
        #expect(store.singleFlightStatistics.failed == 1)
        #expect(store.singleFlightStatistics.loaded == 1)
        #expect(store.singleFlightStatistics.takeovers == 0)
      }
    }

    @Test("a caller cancelled while it loads counts as cancelled, not failed, and gives the lease back")
    func cancelledLoad() async throws {
      try await PostgresTestDatabase.withClient { client in
        let store = try await PostgresStore<String, String>(client: client, table: PostgresTestDatabase.tableName())
        let loading = Gate()
        let origin = Gate()
        let loader = Task {
          try await store.value(forKey: "k") {
            loading.open()
            try await origin.wait()  // throws CancellationError once the caller is cancelled
            return "never"
          }
        }
        try await loading.wait()
        loader.cancel()
        await #expect(throws: CancellationError.self) { try await loader.value }
        #expect(store.singleFlightStatistics.cancelled == 1)
        #expect(store.singleFlightStatistics.failed == 0)
        #expect(
          counterValue(store.counterReadings(), "kiln_postgres_store_single_flight_total", [("outcome", "cancelled")])
            == 1)
        // The lease was given back: the next caller loads at once, without waiting.
        #expect(try await store.value(forKey: "k", waitTimeout: .zero) { "next" } == "next")
        #expect(store.singleFlightStatistics.loaded == 1)
      }
    }

    @Test("a call whose read of the store fails counts as failed: every call ends counted once")
    func failedRead() async throws {
      try await PostgresTestDatabase.withClient { client in
        let table = PostgresTestDatabase.tableName()
        let store = try await PostgresStore<String, String>(client: client, table: table)
        // The table goes away under the store: its read fails on the server.
        try await client.query("DROP TABLE \(unescaped: table)")
        await #expect(throws: PostgresStoreError.self) {
          try await store.value(forKey: "k") {
            Issue.record("loaded though the store could not be read")
            return "loaded"
          }
        }
        let statistics = store.singleFlightStatistics
        #expect(statistics.failed == 1)
        #expect(
          statistics.found + statistics.joined + statistics.loaded + statistics.timedOut + statistics.cancelled == 0)
      }
    }

    @Test("a waiter takes the lease over when the holder's load fails, and loads: counted as a takeover")
    func takeover() async throws {
      try await PostgresTestDatabase.withClient { client in
        let table = PostgresTestDatabase.tableName()
        let holderStore = try await PostgresStore<String, String>(client: client, table: table)
        let clock = ManualClock()
        let waiterStore = try await PostgresStore<String, String>(
          client: client, table: table, operationTimeout: nil, clock: clock)
        let loading = Gate()
        let release = Gate()
        let holder = Task {
          try await holderStore.value(forKey: "k") {
            loading.open()
            try await release.wait()
            throw TestError("origin down")
          }
        }
        try await loading.wait()
        let waiter = Task {
          try await waiterStore.value(forKey: "k", pollInterval: .milliseconds(5)) { "waiter loaded" }
        }
        await clock.waitForSleepers()
        release.open()
        await #expect(throws: TestError("origin down")) { try await holder.value }
        clock.advance(by: .milliseconds(5))
        #expect(try await waiter.value == "waiter loaded")
        #expect(holderStore.singleFlightStatistics.failed == 1)
        #expect(waiterStore.singleFlightStatistics.takeovers == 1)
        #expect(waiterStore.singleFlightStatistics.loaded == 1)
        #expect(counterValue(waiterStore.counterReadings(), "kiln_postgres_store_lease_takeovers_total") == 1)
      }
    }

    @Test("a waiter gives up after its timeout, and a cancelled waiter stops at once")
    func timeoutAndCancellation() async throws {
      try await PostgresTestDatabase.withClient { client in
        let table = PostgresTestDatabase.tableName()
        let holderStore = try await PostgresStore<String, String>(client: client, table: table)
        let clock = ManualClock()
        // No operation time limit: its timers would sleep on the manual clock beside the
        // lease waits this test advances.
        let waiterStore = try await PostgresStore<String, String>(
          client: client, table: table, operationTimeout: nil, clock: clock)
        let loading = Gate()
        let release = Gate()
        let holder = Task {
          try await holderStore.value(forKey: "k") {
            loading.open()
            try await release.wait()
            return "held"
          }
        }
        try await loading.wait()

        let waiter = Task {
          try await waiterStore.value(forKey: "k", waitTimeout: .seconds(1), pollInterval: .milliseconds(500)) {
            "waiter loaded"
          }
        }
        await clock.waitForSleepers()
        clock.advance(by: .milliseconds(500))
        await clock.waitForSleepers()
        clock.advance(by: .milliseconds(500))
        await #expect {
          try await waiter.value
        } throws: { error in
          if case .loadWaitTimedOut(.seconds(1)) = error as? PostgresStoreError { return true }
          return false
        }

        let cancelled = Task {
          try await waiterStore.value(forKey: "k", waitTimeout: .seconds(60)) { "never" }
        }
        await clock.waitForSleepers()
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }

        release.open()
        #expect(try await holder.value == "held")
        #expect(try await waiterStore.value(forKey: "k") == "held")
        #expect(waiterStore.singleFlightStatistics.timedOut == 1)
        #expect(waiterStore.singleFlightStatistics.cancelled == 1)
        #expect(holderStore.singleFlightStatistics.loaded == 1)
      }
    }
  }
#endif
