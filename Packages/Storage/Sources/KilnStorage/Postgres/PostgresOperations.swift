#if PostgreSQL
  import PostgresNIO

  /// How the PostgreSQL stores (``PostgresStore``, ``PostgresOutboxStore``) run an operation:
  /// on a leased connection of the pool, within a time limit, sent again on another
  /// connection when its connection closes under it.
  struct PostgresOperations: Sendable {
    let client: PostgresClient
    /// The deadlines of the operations in flight, or `nil` without a time limit.
    private let deadlines: OperationDeadlines?

    init(client: PostgresClient, operationTimeout: Duration?, clock: any Clock<Duration>) {
      self.client = client
      deadlines = operationTimeout.map { OperationDeadlines(limit: $0, clock: clock) }
    }

    /// How many connections one operation tries when they close under it.
    static var maximumAttempts: Int { 3 }

    /// Runs `body` on a connection of the pool, within the time limit when there is one,
    /// mapping postgres-nio's errors to ``PostgresStoreError``. `body` sends its statements
    /// with ``LeasedStatement/run(_:on:confirmingCommit:)``.
    ///
    /// The time limit bounds the call even when a statement does not end on cancellation (one
    /// blocked on the server, or one whose answer never comes): at the limit (see
    /// ``OperationDeadlines``), a wait for a connection ends and the connection of the
    /// statement in flight is closed, which fails the statement (see ``OperationLease``). The
    /// caller's cancellation ends a wait for a connection at once; a statement already sent is
    /// awaited (milliseconds, or until the limit). A statement whose connection closed before
    /// it answered (the server ended the session, or restarted) is sent again on another
    /// connection, up to ``maximumAttempts`` connections in all, within the same time limit:
    /// `body` must be idempotent.
    func perform<Result: Sendable>(
      _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
      let lease = OperationLease()
      let deadline = deadlines?.arm(lease.expire)
      defer { if let deadline { deadlines?.disarm(deadline) } }
      do {
        return try await Self.withRetries(on: client, lease, body)
      } catch {
        // Whatever failed once the limit passed failed because of it (its connection closed).
        if lease.isExpired && !(error is CancellationError) { throw PostgresStoreError.timedOut }
        throw PostgresStoreError.mapping(error)
      }
    }

    /// Runs `body` between `BEGIN` and `COMMIT` on `connection`; rolls back when it throws.
    static func inTransaction<Result>(
      on connection: PostgresConnection, _ body: () async throws -> Result
    ) async throws -> Result {
      _ = try await LeasedStatement.run("BEGIN", on: connection)
      let result: Result
      do {
        result = try await body()
      } catch {
        // A lost connection rolled the transaction back on the server already.
        if !LeasedStatement.isConnectionLoss(error) {
          _ = try? await LeasedStatement.run("ROLLBACK", on: connection)
        }
        throw error
      }
      _ = try await LeasedStatement.run("COMMIT", on: connection)
      return result
    }

    /// A statement's connection closed before it answered; `error` says how.
    private struct ConnectionLost: Error {
      var error: any Error
    }

    /// Runs `body` on a connection leased through `lease`, and again on another one when the
    /// connection closes before `body` finished.
    private static func withRetries<Result: Sendable>(
      on client: PostgresClient,
      _ lease: OperationLease,
      _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
      var attempt = 1
      while true {
        do {
          return try await lease.withConnection(from: client) { connection in
            do {
              return try await body(connection)
            } catch  where LeasedStatement.isConnectionLoss(error) && !lease.isExpired {
              // Given back only once closed, so that the pool knows and never leases it again.
              try? await connection.close()
              throw ConnectionLost(error: error)
            }
          }
        } catch let lost as ConnectionLost {
          guard attempt < maximumAttempts, !lease.isExpired else { throw lost.error }
          try Task.checkCancellation()
          attempt += 1
        }
      }
    }
  }
#endif
