#if PostgreSQL
  public import Foundation
  import PostgresNIO
  import _KilnSynchronization

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
      // Every call ends counted once: where it returns, where its load fails or it times
      // out, or (a read of the store or a lease statement that throws, a cancelled wait)
      // below.
      var counted = false
      do {
        while true {
          if let entry = try await entry(forKey: key) {
            flightCounters.add(waited > .zero ? .joined : .found)
            return entry.value
          }
          try Task.checkCancellation()
          if try await acquireLease(keyBytes, holder: holder, lease: lease) {
            do {
              // A loader may have stored the value between the read and the lease.
              if let entry = try await entry(forKey: key) {
                await releaseLease(keyBytes, holder: holder)
                flightCounters.add(waited > .zero ? .joined : .found)
                return entry.value
              }
              // Nothing stored though the lease was free: the holder before failed or died.
              if waited > .zero { flightCounters.add(.takeovers) }
              let value = try await load()
              try await setValue(value, forKey: key, expiresAt: expiresAt)
              await releaseLease(keyBytes, holder: holder)
              flightCounters.add(.loaded)
              return value
            } catch {
              await releaseLease(keyBytes, holder: holder)
              // A load cancelled with its caller is a cancelled call, not a failed one.
              flightCounters.add(Self.flightOutcome(of: error))
              counted = true
              throw error
            }
          }
          guard waited < waitTimeout else {
            flightCounters.add(.timedOut)
            counted = true
            throw PostgresStoreError.loadWaitTimedOut(waitTimeout)
          }
          try await clock.sleep(for: pollInterval)
          waited += pollInterval
        }
      } catch {
        if !counted { flightCounters.add(Self.flightOutcome(of: error)) }
        throw error
      }
    }

    /// How a call that ended with `error` counts: cancelled when its task was cancelled or
    /// the error says so (a load that honours cancellation, a cancelled poll), failed
    /// otherwise.
    private static func flightOutcome(of error: any Error) -> PostgresSingleFlightCounter {
      error is CancellationError || Task.isCancelled ? .cancelled : .failed
    }

    func acquireLease(_ key: Data, holder: String, lease: Duration) async throws -> Bool {
      let query = sql.acquireLease(key: key, holder: holder, milliseconds: lease.timeInterval * 1_000)
      return try await perform { connection in
        try await !LeasedStatement.run(query, on: connection, confirmingCommit: true).rows.isEmpty
      }
    }

    /// Gives a lease back, also from a cancelled task, within ``operationTimeout``; a failure
    /// leaves it to run out.
    func releaseLease(_ key: Data, holder: String) async {
      let query = sql.releaseLease(key: key, holder: holder)
      await Task {
        _ = try? await perform { connection in try await LeasedStatement.run(query, on: connection) }
      }.value
    }
  }

  extension PostgresStore: LeasingStore {
    /// Takes the lease on `key` in the `<table>_leases` table, as the single flight of
    /// ``value(forKey:expiresAt:lease:waitTimeout:pollInterval:load:)`` does: one holder at a
    /// time across every process sharing the table, until it gives the lease back or `duration`
    /// runs out on the server's clock.
    ///
    /// - Throws: ``PostgresStoreError``, or a key encoding error.
    public func takeLease(on key: Key, for duration: Duration) async throws -> StoreLease? {
      precondition(duration > .zero, "a lease must last")
      let keyBytes = try encode(key)
      let holder = "\(node)-\(UInt64.random(in: 1...UInt64.max))"
      return try await acquireLease(keyBytes, holder: holder, lease: duration)
        ? StoreLease(key: keyBytes, holder: holder) : nil
    }

    /// Gives `lease` back within ``operationTimeout``, also from a cancelled task; a failure
    /// leaves it to run out.
    public func giveBack(_ lease: StoreLease) async {
      await releaseLease(lease.key, holder: lease.holder)
    }
  }

  /// How the calls to a ``PostgresStore``'s single flight
  /// (``PostgresStore/value(forKey:expiresAt:lease:waitTimeout:pollInterval:load:)``) ended in
  /// this process since the store was created. Read it with
  /// ``PostgresStore/singleFlightStatistics``.
  public struct PostgresSingleFlightStatistics: Hashable, Sendable {
    /// Calls that found the value stored without waiting.
    public var found = 0
    /// Calls that waited for another caller (here or in another process) and got the value
    /// it stored: the origin requests single flight saved.
    public var joined = 0
    /// Calls that took the lease and loaded the value from the origin.
    public var loaded = 0
    /// Loads after waiting, by a caller that took the lease and still found nothing stored: the
    /// holder gave up (its load failed) or died, and its lease ran out.
    public var takeovers = 0
    /// Calls whose load, the write of its value, or a statement of the store (a read, the
    /// lease) failed; a failed load gave the lease back.
    public var failed = 0
    /// Calls that gave up after `waitTimeout` without a value.
    public var timedOut = 0
    /// Calls cancelled while waiting or loading (a load that ended because its caller was
    /// cancelled counts here, not as failed).
    public var cancelled = 0

    /// Creates statistics, all zero.
    public init() {}
  }

  /// The live counters behind ``PostgresSingleFlightStatistics``.
  enum PostgresSingleFlightCounter: Int, CaseIterable {
    case found, joined, loaded, takeovers, failed, timedOut, cancelled
  }

  extension PostgresStore {
    /// How this process's single-flight calls ended: see ``PostgresSingleFlightStatistics``. Read
    /// beside the store's ``statistics``; both are in ``counterReadings()``.
    public var singleFlightStatistics: PostgresSingleFlightStatistics {
      var statistics = PostgresSingleFlightStatistics()
      statistics.found = flightCounters[.found]
      statistics.joined = flightCounters[.joined]
      statistics.loaded = flightCounters[.loaded]
      statistics.takeovers = flightCounters[.takeovers]
      statistics.failed = flightCounters[.failed]
      statistics.timedOut = flightCounters[.timedOut]
      statistics.cancelled = flightCounters[.cancelled]
      return statistics
    }

    /// ``singleFlightStatistics`` named for export: `kiln_postgres_store_single_flight_total`
    /// (`outcome`: `found`, `joined`, `loaded`, `failed`, `timed_out`, `cancelled`) and
    /// `kiln_postgres_store_lease_takeovers_total`.
    var singleFlightReadings: [CounterReading] {
      let statistics = singleFlightStatistics
      let name = "kiln_postgres_store_single_flight_total"
      return [
        CounterReading(name, [("outcome", "found")], value: statistics.found),
        CounterReading(name, [("outcome", "joined")], value: statistics.joined),
        CounterReading(name, [("outcome", "loaded")], value: statistics.loaded),
        CounterReading(name, [("outcome", "failed")], value: statistics.failed),
        CounterReading(name, [("outcome", "timed_out")], value: statistics.timedOut),
        CounterReading(name, [("outcome", "cancelled")], value: statistics.cancelled),
        CounterReading("kiln_postgres_store_lease_takeovers_total", value: statistics.takeovers),
      ]
    }
  }
#endif
