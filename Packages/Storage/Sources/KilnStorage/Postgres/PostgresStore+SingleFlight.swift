#if PostgreSQL
  public import Foundation
  import PostgresNIO

  extension PostgresStore {
    /// The value stored under `key`, or — when there is none — the value `load` returns,
    /// loaded by exactly one caller across every process sharing the table.
    ///
    /// ```swift
    /// let article = try await store.value(forKey: "article/8") { try await api.article(8) }
    /// ```
    ///
    /// The caller that misses first takes a lease row for the key (in `<table>_leases`),
    /// loads, stores the value and gives the lease back; callers that miss meanwhile, here or
    /// in other processes, wait and read the stored value. A lease runs out after `lease` on
    /// the server's clock, so a process that dies while loading (even by `SIGKILL`) blocks the
    /// key no longer than that: the next waiter takes the lease over and loads.
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - expiresAt: The expiry of a loaded value; `nil` applies ``entryLifetime``.
    ///   - lease: How long a loader may hold the key; longer than a load takes. 30 s by default.
    ///   - waitTimeout: How long to wait for another process's load, on the store's clock.
    ///   - pollInterval: How often a waiter looks for the value, on the store's clock.
    ///   - load: Loads the value from the origin. When it throws, the error is rethrown, the
    ///     lease is given back and waiters try themselves.
    /// - Returns: The stored or loaded value.
    /// - Throws: What `load` throws; ``PostgresStoreError/loadWaitTimedOut(_:)`` when no value
    ///   appeared within `waitTimeout`; other ``PostgresStoreError``s; `CancellationError`
    ///   when the task is cancelled while waiting (no lease is left behind).
    public func value(
      forKey key: Key,
      expiresAt: Date? = nil,
      lease: Duration = .seconds(30),
      waitTimeout: Duration = .seconds(60),
      pollInterval: Duration = .milliseconds(20),
      load: @Sendable () async throws -> Value
    ) async throws -> Value {
      precondition(lease > .zero && pollInterval > .zero, "lease and pollInterval must be positive")
      let keyBytes = try encode(key)
      let holder = "\(node)-\(UInt64.random(in: 1...UInt64.max))"
      var waited = Duration.zero
      while true {
        if let entry = try await entry(forKey: key) { return entry.value }
        try Task.checkCancellation()
        if try await acquireLease(keyBytes, holder: holder, lease: lease) {
          do {
            // A loader may have stored the value between the read and the lease.
            if let entry = try await entry(forKey: key) {
              await releaseLease(keyBytes, holder: holder)
              return entry.value
            }
            let value = try await load()
            try await setValue(value, forKey: key, expiresAt: expiresAt)
            await releaseLease(keyBytes, holder: holder)
            return value
          } catch {
            await releaseLease(keyBytes, holder: holder)
            throw error
          }
        }
        guard waited < waitTimeout else { throw PostgresStoreError.loadWaitTimedOut(waitTimeout) }
        try await clock.sleep(for: pollInterval)
        waited += pollInterval
      }
    }

    private func acquireLease(_ key: Data, holder: String, lease: Duration) async throws -> Bool {
      let query = sql.acquireLease(key: key, holder: holder, milliseconds: lease.timeInterval * 1_000)
      return try await perform { connection in
        try await !LeasedStatement.run(query, on: connection, confirmingCommit: true).rows.isEmpty
      }
    }

    /// Gives a lease back, also from a cancelled task, within ``operationTimeout``; a failure
    /// leaves it to run out.
    private func releaseLease(_ key: Data, holder: String) async {
      let query = sql.releaseLease(key: key, holder: holder)
      await Task {
        _ = try? await perform { connection in try await LeasedStatement.run(query, on: connection) }
      }.value
    }
  }
#endif
