#if PostgreSQL
  import PostgresNIO
  import _KilnSynchronization

  /// Runs a statement on a leased pool connection so that it can never wait forever for a
  /// connection that closed under it.
  ///
  /// postgres-nio 1.33 writes each statement to the connection's channel without a write
  /// promise (`PostgresConnection.query`, `PostgresClient.query`). When the server ends a
  /// session, NIO marks the channel inactive and only one event-loop tick later removes its
  /// handlers and completes `closeFuture`, which is how the pool learns that the connection
  /// is gone. A statement written to a connection leased in between reaches a pipeline with
  /// no PostgreSQL handler: NIO drops the write, nothing ever completes the statement's
  /// promise, and the caller waits forever, deaf to cancellation. It happens after
  /// `pg_terminate_backend` or a server restart, typically to the connection a `LISTEN`
  /// hands back the moment it fails (vapor/postgres-nio#487 fixed the missing promise and was
  /// reverted by #501 for a leak; `Examples/PostgresPoolRepro` reproduces it with postgres-nio
  /// alone: about 1 write in 60 hangs, 1 in 20 under load).
  ///
  /// Here the statement runs in a task of its own, and the caller waits for whichever comes
  /// first: the statement's outcome, or the connection's `closeFuture`. A connection that
  /// closes before the statement answered ends the wait with ``Lost``: the statement was
  /// never sent (the dropped write), or it was sent and its answer will never come, so the
  /// caller may send it again on another connection. Every statement of ``PostgresStore`` is
  /// idempotent (upserts of given values, deletes, reads, a lease taken again by its holder),
  /// so sending it again is safe.
  enum LeasedStatement {
    /// The connection closed before the statement answered.
    struct Lost: Error {}

    /// Runs `body` on `connection`; throws ``Lost`` when the connection closes first.
    static func run<Value: Sendable>(
      on connection: PostgresConnection,
      _ body: @escaping @Sendable (PostgresConnection) async throws -> Value
    ) async throws -> Value {
      let race = Race<Result<Value, any Error>>()
      let watch = ClosedConnections.shared.watch(connection) { race.resolve(.failure(Lost())) }
      defer { if let watch { ClosedConnections.shared.stopWatching(connection, watch) } }
      guard watch != nil else { throw Lost() }
      race.track(
        Task {
          do {
            race.resolve(.success(try await body(connection)))
          } catch {
            race.resolve(.failure(error))
          }
        })
      return try await race.wait(orWhenCancelled: { .failure(CancellationError()) }).get()
    }
  }

  /// The connection an operation's statement runs on now, for the deadline to close.
  final class ConnectionInUse: Sendable {
    private let state = KilnMutex<PostgresConnection?>(nil)

    var connection: PostgresConnection? {
      get { state.withLock { $0 } }
      set { state.withLock { $0 = newValue } }
    }

    /// Closes the connection, if a statement runs on one: called when the statement did not
    /// answer within its operation's time limit. Its connection is suspect (gone silent, or
    /// stuck behind a lock); closing it fails the statement and gives it back to the pool.
    @Sendable func close() {
      if let connection {
        let _: EventLoopFuture<Void> = connection.close()
      }
    }
  }

  /// Who waits for which pooled connection to close: one `closeFuture` callback per
  /// connection, however many statements it runs (a callback per statement would pile up for
  /// the connection's whole life).
  final class ClosedConnections: Sendable {
    static let shared = ClosedConnections()

    private struct Entry {
      weak var connection: PostgresConnection?
      var waiters: [UInt64: @Sendable () -> Void] = [:]
    }

    private struct State {
      var entries: [ObjectIdentifier: Entry] = [:]
      var nextToken: UInt64 = 0
    }

    private let state = KilnMutex(State())

    /// Calls `onClose` once `connection` has closed, unless ``stopWatching(_:_:)`` came
    /// first.
    ///
    /// - Returns: The token to stop watching with, or `nil` when the connection has already
    ///   closed (and `onClose` is not called).
    func watch(_ connection: PostgresConnection, onClose: @escaping @Sendable () -> Void) -> UInt64? {
      let id = ObjectIdentifier(connection)
      let (token, isNew) = state.withLock { state in
        state.nextToken &+= 1
        let token = state.nextToken
        // An entry whose connection is gone belongs to an object that had the same address.
        if let entry = state.entries[id], entry.connection === connection {
          state.entries[id]?.waiters[token] = onClose
          return (token, false)
        }
        state.entries[id] = Entry(connection: connection, waiters: [token: onClose])
        return (token, true)
      }
      if isNew {
        connection.closeFuture.whenComplete { _ in self.closed(id, connection) }
      }
      // The channel may have finished closing before the callback was added: then it ran
      // already, or runs soon; either way `onClose` is called. Reading it here too keeps a
      // caller from starting a statement on a connection known to be closed.
      if connection.isClosed {
        stopWatching(connection, token)
        return nil
      }
      return token
    }

    /// Forgets the waiter of `token`.
    func stopWatching(_ connection: PostgresConnection, _ token: UInt64) {
      let id = ObjectIdentifier(connection)
      state.withLock { state in
        guard state.entries[id]?.connection === connection else { return }
        state.entries[id]?.waiters[token] = nil
      }
    }

    /// The number of connections watched, for tests.
    var count: Int {
      state.withLock { $0.entries.count }
    }

    private func closed(_ id: ObjectIdentifier, _ connection: PostgresConnection) {
      let waiters: [@Sendable () -> Void] = state.withLock { state in
        guard let entry = state.entries[id], entry.connection === connection else { return [] }
        state.entries[id] = nil
        return Array(entry.waiters.values)
      }
      for waiter in waiters { waiter() }
    }
  }
#endif
