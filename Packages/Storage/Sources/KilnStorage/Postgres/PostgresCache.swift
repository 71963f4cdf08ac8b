#if PostgreSQL
  public import Foundation
  public import Logging
  import PostgresNIO
  import Synchronization
  import _KilnSynchronization

  /// A memory tier in front of a ``PostgresStore`` that every other process's writes
  /// invalidate, through PostgreSQL's `LISTEN`/`NOTIFY`.
  ///
  /// ```swift
  /// let store = try await PostgresStore<String, Article>(client: client, table: "articles")
  /// let cache = PostgresCache(memory: MemoryCache(countLimit: 1_000), store: store)
  /// async let _ = cache.run()                              // listens; re-subscribes after a lost connection
  /// try await cache.setValue(article, forKey: "article/7")  // memory here, table everywhere
  /// let hit = try await cache.value(forKey: "article/7")    // memory, else the table (then kept)
  /// let loaded = try await cache.value(forKey: "article/8") { try await api.article(8) }  // one load fleet-wide
  /// ```
  ///
  /// Reads and writes work like a ``TieredCache``: reads are served from memory, else from
  /// the table and copied into memory; writes go to both. Every write through any
  /// ``PostgresStore`` on the same table notifies its channel, and ``run()`` drops the
  /// memory copy of each key another process changed or removed.
  ///
  /// Memory is trusted only while ``run()`` is subscribed: until the first subscription and
  /// whenever the listening connection is lost, reads go to the table and nothing is kept in
  /// memory. Each (re)subscription empties the memory tier, since notifications sent while
  /// it was not listening are lost — a missed notification never leaves stale data behind.
  ///
  /// - Important: Use one `PostgresCache` per ``PostgresStore``: the cache ignores the
  ///   notifications of its own store's writes.
  public final class PostgresCache<Key: Hashable & Sendable, Value: Sendable>: KeyValueStore, Sendable {
    /// The first tier, local to this process.
    public let memory: MemoryCache<Key, Value>

    /// The shared tier.
    public let store: PostgresStore<Key, Value>

    /// How long an entry stored without an explicit expiry lives in both tiers; `nil` for
    /// until removed.
    public let entryLifetime: Duration?

    /// How long ``run()`` waits before subscribing again after losing its connection.
    public let reconnectDelay: Duration

    /// How often ``run()`` checks that its listening connection still answers, and how long
    /// it waits for the answer; `nil` for never.
    public let heartbeatInterval: Duration?

    /// Where ``run()`` tells how its subscription fares: `info` when it subscribes, `warning`
    /// when it loses its connection or a heartbeat goes unanswered (memory is distrusted until
    /// it subscribes again; once per outage, then `debug` for each failed reconnection), `trace`
    /// for each invalidation another process sends. Nothing is logged on the read or write
    /// path. A logger that discards everything unless given.
    public let logger: Logger

    private let writes = WriteEpochs()
    /// Bumped by every change another process made and by every (un)subscription: a value
    /// read or written before a bump may be stale and is not kept in memory.
    private let remoteChanges = Atomic<UInt64>(0)
    private let state = KilnMutex(ListenerState())
    private let counters = AtomicCounters<PostgresCacheCounter>()
    private let onInvalidate: (@Sendable (Key?) -> Void)?

    private struct ListenerState {
      var isListening = false
      var subscriptions = 0
      /// Whether this outage (since the last subscription) was logged at `warning` already.
      var warnedOutage = false
      var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    /// Puts `memory` in front of `store`.
    ///
    /// - Parameters:
    ///   - memory: The local tier. Its own `entryLifetime` is not used.
    ///   - store: The shared table.
    ///   - entryLifetime: The lifetime of entries written without an explicit expiry, in
    ///     both tiers; `nil` (the default) for until removed or evicted.
    ///   - reconnectDelay: The pause between a lost listening connection and the next
    ///     subscription, on the store's clock; one second by default.
    ///   - heartbeatInterval: How often ``run()`` checks, with a `SELECT 1` on the listening
    ///     connection, that the connection still answers, and how long it waits for the answer,
    ///     on the store's clock; 5 seconds by default, `nil` for never. A connection that went
    ///     silent without closing (a dropped route, a peer that vanished) delivers no
    ///     notification and reports no error: without a heartbeat, memory would be trusted while
    ///     other processes' changes are missed, until TCP gives up (minutes to hours).
    ///   - onInvalidate: Called after another process's change dropped a key from memory
    ///     (`nil`: the whole memory tier was dropped). For metrics and tests.
    public convenience init(
      memory: MemoryCache<Key, Value>,
      store: PostgresStore<Key, Value>,
      entryLifetime: Duration? = nil,
      reconnectDelay: Duration = .seconds(1),
      heartbeatInterval: Duration? = .seconds(5),
      onInvalidate: (@Sendable (Key?) -> Void)? = nil
    ) {
      self.init(
        memory: memory, store: store, entryLifetime: entryLifetime, reconnectDelay: reconnectDelay,
        heartbeatInterval: heartbeatInterval,
        logger: Logger(label: "kiln.postgres-cache") { _ in SwiftLogNoOpLogHandler() },
        onInvalidate: onInvalidate)
    }

    /// Puts `memory` in front of `store`, logging how the subscription fares through `logger`.
    ///
    /// ```swift
    /// let cache = PostgresCache(memory: MemoryCache(countLimit: 1_000), store: store, logger: logger)
    /// ```
    ///
    /// - Parameters:
    ///   - memory: The local tier. Its own `entryLifetime` is not used.
    ///   - store: The shared table.
    ///   - entryLifetime: The lifetime of entries written without an explicit expiry, in
    ///     both tiers; `nil` (the default) for until removed or evicted.
    ///   - reconnectDelay: The pause between a lost listening connection and the next
    ///     subscription, on the store's clock; one second by default.
    ///   - heartbeatInterval: How often ``run()`` checks that the listening connection still
    ///     answers, and how long it waits for the answer; 5 seconds by default, `nil` for never.
    ///   - logger: Where ``run()`` logs (see ``logger``).
    ///   - onInvalidate: Called after another process's change dropped a key from memory
    ///     (`nil`: the whole memory tier was dropped).
    public init(
      memory: MemoryCache<Key, Value>,
      store: PostgresStore<Key, Value>,
      entryLifetime: Duration? = nil,
      reconnectDelay: Duration = .seconds(1),
      heartbeatInterval: Duration? = .seconds(5),
      logger: Logger,
      onInvalidate: (@Sendable (Key?) -> Void)? = nil
    ) {
      precondition(entryLifetime.map { $0 > .zero } ?? true, "PostgresCache entryLifetime must be positive")
      precondition(heartbeatInterval.map { $0 > .zero } ?? true, "PostgresCache heartbeatInterval must be positive")
      self.memory = memory
      self.store = store
      self.entryLifetime = entryLifetime
      self.reconnectDelay = reconnectDelay
      self.heartbeatInterval = heartbeatInterval
      self.logger = logger
      self.onInvalidate = onInvalidate
    }

    /// Whether ``run()`` is subscribed now, so that the memory tier is trusted.
    public var isListening: Bool {
      state.withLock { $0.isListening }
    }

    /// How many times ``run()`` has subscribed (once, plus once per lost connection).
    public var subscriptionCount: Int {
      state.withLock { $0.subscriptions }
    }

    /// Returns once ``run()`` has subscribed at least `count` times.
    ///
    /// - Parameter count: The number of subscriptions to wait for; 1 by default.
    public func waitUntilSubscribed(count: Int = 1) async {
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let ready = state.withLock { state in
          guard state.subscriptions < count else { return true }
          state.waiters.append((count, continuation))
          return false
        }
        if ready { continuation.resume() }
      }
    }

    // MARK: - KeyValueStore

    /// The entry under `key` from memory (while subscribed), else from the table (then
    /// copied into memory unless a change of `key` arrived meanwhile).
    ///
    /// - Throws: What the store throws.
    public func entry(forKey key: Key) async throws -> CacheEntry<Value>? {
      let listening = isListening
      if listening, let hit = memory.entry(forKey: key) {
        counters.add(.memoryHits)
        return hit
      }
      let changes = remoteChanges.load(ordering: .acquiring)
      let snapshot = writes.snapshot(key)
      guard let entry = try await store.entry(forKey: key) else {
        counters.add(.misses)
        return nil
      }
      counters.add(.tableHits)
      if listening, let snapshot {
        memory.setEntry(entry, forKey: key, if: { writes.isUnchanged(key, since: snapshot) && isCurrent(changes) })
      }
      return entry
    }

    /// Stores `value` in the table (notifying every other process) and in memory.
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: Its key.
    ///   - expiresAt: When it expires; `nil` applies ``entryLifetime``.
    /// - Throws: What the store throws; memory then no longer holds the key.
    public func setValue(_ value: Value, forKey key: Key, expiresAt: Date?) async throws {
      let stamp = store.now()
      let expiry = expiresAt ?? entryLifetime.map { stamp.addingTimeInterval($0.timeInterval) }
      writes.begin(key)
      defer { writes.end(key) }
      memory.removeValue(forKey: key)
      let changes = remoteChanges.load(ordering: .acquiring)
      try await store.setValue(value, forKey: key, expiresAt: expiry)
      // Kept only when no other process's change arrived meanwhile: theirs may be newer.
      memory.setEntry(
        CacheEntry(value: value, storedAt: stamp, expiresAt: expiry ?? .distantFuture), forKey: key,
        if: { isCurrent(changes) })
    }

    /// Removes `key` from both tiers (and from every other process's memory).
    ///
    /// - Throws: What the store throws (memory is cleared regardless).
    public func removeValue(forKey key: Key) async throws {
      writes.begin(key)
      defer { writes.end(key) }
      memory.removeValue(forKey: key)
      try await store.removeValue(forKey: key)
    }

    /// Empties both tiers (and every other process's memory tier).
    ///
    /// - Throws: What the store throws (memory is cleared regardless).
    public func removeAll() async throws {
      writes.beginAll()
      defer { writes.endAll() }
      memory.removeAll()
      try await store.removeAll()
    }

    /// The value under `key`, or the value `load` returns, loaded once across every process
    /// (see ``PostgresStore/value(forKey:expiresAt:lease:waitTimeout:pollInterval:load:)``),
    /// then kept in memory.
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - lease: How long a loader may hold the key.
    ///   - waitTimeout: How long to wait for another process's load.
    ///   - load: Loads the value from the origin.
    /// - Returns: The cached, stored or loaded value.
    /// - Throws: What `load` or the store throws.
    public func value(
      forKey key: Key,
      lease: Duration = .seconds(30),
      waitTimeout: Duration = .seconds(60),
      load: @Sendable () async throws -> Value
    ) async throws -> Value {
      if let hit = try await entry(forKey: key) { return hit.value }
      let stamp = store.now()
      let expiry = entryLifetime.map { stamp.addingTimeInterval($0.timeInterval) }
      return try await store.value(forKey: key, expiresAt: expiry, lease: lease, waitTimeout: waitTimeout, load: load)
    }

    // MARK: - Listening

    /// Whether memory may keep what was read or written since `changes` was loaded.
    private func isCurrent(_ changes: UInt64) -> Bool {
      state.withLock { $0.isListening } && remoteChanges.load(ordering: .acquiring) == changes
    }

    private func bumpRemoteChanges() {
      remoteChanges.wrappingAdd(1, ordering: .acquiringAndReleasing)
    }

    /// Listens to the store's channel and drops what other processes change, until the task
    /// is cancelled; after a lost connection it waits ``reconnectDelay`` and subscribes again.
    ///
    /// Every ``heartbeatInterval`` it checks that the listening connection still answers; one
    /// that does not answer in time is closed and counts as lost, so a connection that went
    /// silent stops memory from being trusted within two intervals. A lost connection is given
    /// back to the pool only once the pool knows it is closed (see `LeasedStatement` for the
    /// postgres-nio behaviour this avoids).
    ///
    /// Run it beside the client: `async let _ = cache.run()`, a task group, or a
    /// swift-service-lifecycle `ServiceGroup`.
    public func run() async {
      // In a ServiceGroup, a graceful shutdown ends the loop as a cancellation does.
      await runUntilGracefulShutdown { await self.runUntilCancelled() }
    }

    private func runUntilCancelled() async {
      while !Task.isCancelled {
        do {
          try await store.client.withConnection { connection in
            do {
              try await listen(on: connection)
            } catch {
              guard !Task.isCancelled else { throw error }
              unsubscribed()
              // A listener failed by a closing connection is failed a moment before the
              // pool learns of the close; given back at once, the pool could lease the dead
              // connection to the next statement, whose write postgres-nio then drops.
              await waitUntilClosed(connection)
              throw error
            }
          }
        } catch {
          if !Task.isCancelled {
            // Once per outage at warning: a database that stays down fails every reconnection.
            logger.log(
              level: firstWarningOfOutage() ? .warning : .debug,
              "Kiln PostgresCache: the listening connection failed or closed; memory is distrusted until it subscribes again",
              metadata: ["kiln_channel": "\(store.channel)", "error": "\(String(reflecting: error))"])
          }
        }
        unsubscribed()
        if !Task.isCancelled { counters.add(.connectionLosses) }
        do {
          try await store.clock.sleep(for: reconnectDelay)
        } catch {
          return
        }
      }
    }

    /// Subscribes on `connection` and applies notifications until the connection is lost
    /// (or misses a heartbeat) or the task is cancelled.
    private func listen(on connection: PostgresConnection) async throws {
      try await connection.listen(on: store.channel) { notifications in
        subscribed()
        try await withThrowingTaskGroup(of: Void.self) { group in
          group.addTask {
            for try await notification in notifications {
              self.apply(PostgresCacheNotification(payload: notification.payload))
            }
          }
          if let heartbeatInterval {
            group.addTask { try await self.heartbeat(on: connection, every: heartbeatInterval) }
          }
          defer { group.cancelAll() }
          try await group.next()
        }
      }
    }

    /// Returns only by throwing: when `connection` does not answer a `SELECT 1` within
    /// `interval`, after closing it (which ends the subscription), or when cancelled.
    private func heartbeat(on connection: PostgresConnection, every interval: Duration) async throws {
      while true {
        try await store.clock.sleep(for: interval)
        let answered = await Race<Bool>.run(
          within: interval, clock: store.clock,
          {
            do {
              _ = try await LeasedStatement.run("SELECT 1", on: connection)
              return true
            } catch {
              return false
            }
          },
          timedOut: { false },
          cancelled: { true })
        try Task.checkCancellation()
        guard answered else {
          // Memory is distrusted from now on, not from when the close is noticed.
          counters.add(.missedHeartbeats)
          logger.log(
            level: firstWarningOfOutage() ? .warning : .debug,
            "Kiln PostgresCache: the listening connection missed a heartbeat; closing it",
            metadata: ["kiln_channel": "\(store.channel)", "kiln_heartbeat_interval": "\(interval)"])
          unsubscribed()
          let _: EventLoopFuture<Void> = connection.close()
          throw PostgresStoreError.timedOut
        }
      }
    }

    /// Waits, at most one second on the store's clock, until `connection` has closed.
    private func waitUntilClosed(_ connection: PostgresConnection) async {
      _ = await Race<Bool>.run(
        within: .seconds(1), clock: store.clock,
        {
          _ = try? await connection.closeFuture.get()
          return true
        },
        timedOut: { false },
        cancelled: { false })
    }

    private func subscribed() {
      // Notifications sent while nobody listened are lost: nothing in memory is trusted.
      bumpRemoteChanges()
      memory.removeAll()
      counters.add(.subscriptions)
      logger.info("Kiln PostgresCache subscribed", metadata: ["kiln_channel": "\(store.channel)"])
      let ready = state.withLock { state in
        state.warnedOutage = false
        state.isListening = true
        state.subscriptions += 1
        let count = state.subscriptions
        let ready = state.waiters.filter { $0.count <= count }.map(\.continuation)
        state.waiters.removeAll { $0.count <= count }
        return ready
      }
      for continuation in ready { continuation.resume() }
    }

    /// Whether the outage now beginning (or going on) was not logged at `warning` yet; it is
    /// from now on.
    private func firstWarningOfOutage() -> Bool {
      state.withLock { state in
        defer { state.warnedOutage = true }
        return !state.warnedOutage
      }
    }

    private func unsubscribed() {
      state.withLock { $0.isListening = false }
      bumpRemoteChanges()
      memory.removeAll()
    }

    private func apply(_ notification: PostgresCacheNotification) {
      guard notification.node != store.node else { return }
      switch notification.change {
      case .key(let bytes):
        guard let key = try? store.keyCodec.decode(bytes) else { return dropEverything() }
        bumpRemoteChanges()
        memory.removeValue(forKey: key)
        counters.add(.invalidatedKeys)
        logger.trace(
          "Kiln PostgresCache: another process changed a key", metadata: ["kiln_channel": "\(store.channel)"])
        onInvalidate?(key)
      case .everything:
        dropEverything()
      }
    }

    private func dropEverything() {
      bumpRemoteChanges()
      memory.removeAll()
      counters.add(.invalidatedAll)
      logger.trace("Kiln PostgresCache: memory dropped whole", metadata: ["kiln_channel": "\(store.channel)"])
      onInvalidate?(nil)
    }
  }

  extension PostgresCache: LeasingStore {
    /// Takes the lease on `key` in the table's leases: see ``PostgresStore/takeLease(on:for:)``.
    public func takeLease(on key: Key, for duration: Duration) async throws -> StoreLease? {
      try await store.takeLease(on: key, for: duration)
    }

    /// Gives `lease` back: see ``PostgresStore/giveBack(_:)``.
    public func giveBack(_ lease: StoreLease) async {
      await store.giveBack(lease)
    }
  }

  /// What a ``PostgresCache`` did since it was created: where reads were answered, what other
  /// processes' changes dropped from memory, and how its subscription fared. Read it with
  /// ``PostgresCache/statistics``; the tiers count their own work too (`memory.statistics`,
  /// `store.statistics`).
  public struct PostgresCacheStatistics: Hashable, Sendable {
    /// Reads answered by the memory tier (trusted only while subscribed).
    public var memoryHits = 0
    /// Reads answered by the table.
    public var tableHits = 0
    /// Reads that found nothing in either tier.
    public var misses = 0
    /// Keys dropped from memory because another process changed them.
    public var invalidatedKeys = 0
    /// Times the whole memory tier was dropped because another process emptied the table
    /// (or sent a key this process cannot decode).
    public var invalidatedAll = 0
    /// Times ``PostgresCache/run()`` subscribed to the table's channel (the first time and
    /// after each lost connection).
    public var subscriptions = 0
    /// Times the listener lost its connection (closed, failed, or a missed heartbeat) or
    /// could not get one, other than by cancellation. Memory is dropped and distrusted until
    /// the next subscription.
    public var connectionLosses = 0
    /// Heartbeats the listening connection did not answer in time (each then closed it).
    public var missedHeartbeats = 0

    /// Creates statistics, all zero.
    public init() {}
  }

  /// The live counters behind ``PostgresCacheStatistics``.
  enum PostgresCacheCounter: Int, CaseIterable {
    case memoryHits, tableHits, misses, invalidatedKeys, invalidatedAll, subscriptions, connectionLosses
    case missedHeartbeats
  }

  extension PostgresCache: CountingSource {
    /// What the cache did since it was created: see ``PostgresCacheStatistics``.
    public var statistics: PostgresCacheStatistics {
      var statistics = PostgresCacheStatistics()
      statistics.memoryHits = counters[.memoryHits]
      statistics.tableHits = counters[.tableHits]
      statistics.misses = counters[.misses]
      statistics.invalidatedKeys = counters[.invalidatedKeys]
      statistics.invalidatedAll = counters[.invalidatedAll]
      statistics.subscriptions = counters[.subscriptions]
      statistics.connectionLosses = counters[.connectionLosses]
      statistics.missedHeartbeats = counters[.missedHeartbeats]
      return statistics
    }

    /// ``statistics`` named for export: `kiln_postgres_cache_lookups_total` (`result`:
    /// `memory_hit`, `table_hit`, `miss`), `kiln_postgres_cache_invalidations_total` (`scope`:
    /// `key`, `all`), `kiln_postgres_cache_subscriptions_total`,
    /// `kiln_postgres_cache_connection_losses_total`, `kiln_postgres_cache_missed_heartbeats_total`
    /// and the gauge `kiln_postgres_cache_listening` (1 while subscribed). The tiers' own
    /// readings are theirs to give.
    public func counterReadings() -> [CounterReading] {
      let statistics = statistics
      return [
        CounterReading("kiln_postgres_cache_lookups_total", [("result", "memory_hit")], value: statistics.memoryHits),
        CounterReading("kiln_postgres_cache_lookups_total", [("result", "table_hit")], value: statistics.tableHits),
        CounterReading("kiln_postgres_cache_lookups_total", [("result", "miss")], value: statistics.misses),
        CounterReading(
          "kiln_postgres_cache_invalidations_total", [("scope", "key")], value: statistics.invalidatedKeys),
        CounterReading("kiln_postgres_cache_invalidations_total", [("scope", "all")], value: statistics.invalidatedAll),
        CounterReading("kiln_postgres_cache_subscriptions_total", value: statistics.subscriptions),
        CounterReading("kiln_postgres_cache_connection_losses_total", value: statistics.connectionLosses),
        CounterReading("kiln_postgres_cache_missed_heartbeats_total", value: statistics.missedHeartbeats),
        CounterReading("kiln_postgres_cache_listening", value: isListening ? 1 : 0, kind: .gauge),
      ]
    }
  }
#endif
