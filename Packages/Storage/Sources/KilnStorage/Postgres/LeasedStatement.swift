#if PostgreSQL
  import PostgresNIO
  import _KilnSynchronization

  /// Runs statements on a leased pool connection so that none can wait forever for a
  /// connection that closed under it.
  ///
  /// postgres-nio 1.33 writes each statement to the connection's channel without a write
  /// promise (`PostgresConnection.query`, `PostgresClient.query`). When the server ends a
  /// session, NIO marks the channel inactive and only one event-loop tick later removes its
  /// handlers and completes `closeFuture`, which is how the pool learns that the connection
  /// is gone. A statement written from another thread to a connection leased in between is
  /// queued behind that removal and reaches a pipeline with no PostgreSQL handler: NIO drops
  /// the write, nothing ever completes the statement's promise, and the caller waits forever,
  /// deaf to cancellation. It happens after `pg_terminate_backend` or a server restart,
  /// typically to the connection a `LISTEN` hands back the moment it fails
  /// (vapor/postgres-nio#487 fixed the missing promise and was reverted by #501 for a leak;
  /// `Examples/PostgresPoolRepro` reproduces it with postgres-nio alone: about 1 write in 60
  /// hangs, 1 in 20 under load).
  ///
  /// ``run(_:on:)`` avoids it: it writes the statement from the connection's event loop, in
  /// the same event-loop task that checks the channel is still active. An active channel
  /// still has its handlers (they are removed only after it became inactive), so the
  /// statement reaches the PostgreSQL handler, which answers it or fails it when the
  /// connection closes; an inactive one fails at once with ``Lost``. It costs no task and no
  /// thread hop beyond the one every statement makes to the event loop.
  enum LeasedStatement {
    /// The connection had closed before the statement could be written: it was never sent.
    struct Lost: Error {}

    /// Runs `query` on `connection` and collects its rows.
    ///
    /// A write (`confirmingCommit`) returns only once it is committed. postgres-nio reports a
    /// statement done at its `CommandComplete`, but in the extended protocol the server
    /// commits a statement's implicit transaction only at the `Sync` after it, and a session
    /// ended in between (a restart, `pg_terminate_backend`: the server flushes the
    /// `CommandComplete` with its `FATAL`) rolls the write back after it was reported done.
    /// So a write is followed, on the same connection and from the same event-loop task, by a
    /// `SELECT 1`, which the connection starts only once the server said `ReadyForQuery`
    /// after the commit: its answer proves the commit, and its failure (the session ended)
    /// makes the write a connection loss, sent again on another connection.
    ///
    /// - Throws: ``Lost`` when the connection has closed; what postgres-nio throws.
    static func run(
      _ query: PostgresQuery, on connection: PostgresConnection, confirmingCommit: Bool = false
    ) async throws -> PostgresQueryResult {
      try await connection.eventLoop.flatSubmit {
        guard !connection.isClosed else { return connection.eventLoop.makeFailedFuture(Lost()) }
        let result = connection.query(query, logger: postgresStoreLogger)
        guard confirmingCommit else { return result }
        return result.and(connection.query("SELECT 1", logger: postgresStoreLogger)).map(\.0)
      }.get()
    }

    /// Whether `error` means the connection closed before the statement answered (never
    /// sent, or cut off while the server ran it: then the server rolled it back), so that
    /// sending it again on another connection is what the caller wants.
    static func isConnectionLoss(_ error: any Error) -> Bool {
      switch error {
      case is Lost:
        return true
      case let error as PSQLError:
        switch error.code {
        case .clientClosedConnection, .serverClosedConnection, .connectionError, .uncleanShutdown:
          return true
        case .server:
          // The server ended the session: an administrator, a shutdown, a crash.
          let state = error.serverInfo?[.sqlState] ?? ""
          return ["57P01", "57P02", "08000", "08003", "08006"].contains(state)
        default:
          return false
        }
      default:
        return false
      }
    }
  }

  /// One operation's hold on the pool: it leases a connection and runs the operation's
  /// statements on it in the calling task, and ends the operation when its time limit passes.
  ///
  /// Only the wait for a connection runs in a task of its own, so that the time limit and the
  /// caller's cancellation can end it (postgres-nio's pool withdraws a cancelled request);
  /// when the pool has a connection ready, that task leases it before it first suspends
  /// (`Task.immediate`), and the statements then cost no thread hop beyond the one every
  /// statement makes to its event loop. The task gives the connection back once the caller
  /// is done with it.
  final class OperationLease: Sendable {
    private struct State {
      var connection: PostgresConnection?
      var waiting: Race<Result<PostgresConnection, any Error>>?
      var isExpired = false
    }

    private let state = KilnMutex(State())

    /// Whether ``expire()`` was called.
    var isExpired: Bool {
      state.withLock { $0.isExpired }
    }

    /// Ends the operation: called when its time limit passed. A wait for a connection ends
    /// with ``PostgresStoreError/timedOut``; the connection of a statement in flight is closed,
    /// which fails the statement and gives the connection back to the pool, so that a
    /// connection gone silent (or stuck behind a lock) is never leased again.
    @Sendable func expire() {
      let (connection, waiting) = state.withLock { state in
        state.isExpired = true
        return (state.connection, state.waiting)
      }
      waiting?.resolve(.failure(PostgresStoreError.timedOut))
      if let connection {
        let _: EventLoopFuture<Void> = connection.close()
      }
    }

    /// Leases a connection from `client` and runs `body` on it in the calling task.
    ///
    /// - Throws: ``PostgresStoreError/timedOut`` once expired; `CancellationError` when the
    ///   caller is cancelled while waiting for a connection; what `body` or the pool throws.
    func withConnection<Result: Sendable>(
      from client: PostgresClient,
      _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
      let race = Race<Swift.Result<PostgresConnection, any Error>>()
      let done = Signal()
      let expired = state.withLock { state in
        state.waiting = race
        return state.isExpired
      }
      guard !expired else { throw PostgresStoreError.timedOut }
      @Sendable func lease() async {
        do {
          try await client.withConnection { connection in
            self.state.withLock { $0.connection = connection }
            guard race.resolve(.success(connection)) else {
              self.state.withLock { $0.connection = nil }
              return
            }
            // Held until the caller is done with it; deaf to cancellation, since the race
            // cancels this task once it is resolved.
            await done.wait()
          }
        } catch {
          race.resolve(.failure(error))
        }
      }
      race.track(startImmediately { await lease() })
      let leased = await race.wait(orWhenCancelled: { .failure(CancellationError()) })
      state.withLock { $0.waiting = nil }
      defer {
        state.withLock { $0.connection = nil }
        done.signal()
      }
      let connection = try leased.get()
      guard !isExpired else { throw PostgresStoreError.timedOut }
      return try await body(connection)
    }
  }

  /// A one-shot signal that one task waits for, ignoring cancellation.
  final class Signal: Sendable {
    private struct State {
      var isSignalled = false
      var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = KilnMutex(State())

    func wait() async {
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let ready = state.withLock { state in
          if state.isSignalled { return true }
          state.waiter = continuation
          return false
        }
        if ready { continuation.resume() }
      }
    }

    func signal() {
      let waiter = state.withLock { state in
        state.isSignalled = true
        defer { state.waiter = nil }
        return state.waiter
      }
      waiter?.resume()
    }
  }
#endif
