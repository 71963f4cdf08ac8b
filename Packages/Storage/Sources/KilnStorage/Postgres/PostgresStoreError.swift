#if PostgreSQL
  import PostgresNIO

  /// Why a ``PostgresStore`` or ``PostgresCache`` call failed.
  ///
  /// Connection trouble — a server that refuses connections, restarts or cuts a session —
  /// is ``connectionFailed(_:)`` for the operations in flight; the client reconnects on its
  /// own, so the next call can succeed without restarting the process. A write that threw
  /// was either committed completely or not at all (each write is one statement).
  public enum PostgresStoreError: Error, Sendable, CustomStringConvertible {
    /// The table name is not a plain SQL identifier (letters, digits and `_`, at most 48
    /// characters, not starting with a digit).
    case invalidTableName(String)

    /// The table exists with another layout (it is not a Kiln store's), or was created by a
    /// newer Kiln whose schema version this one does not know. Nothing was changed.
    case incompatibleTable(table: String, reason: String)

    /// The server could not be reached, refused the connection, or closed it while a
    /// statement was in flight (a restart, an administrator's shutdown).
    case connectionFailed(String)

    /// The server cancelled the statement after its `statement_timeout` (a write is then
    /// not committed), or the store's own `operationTimeout` passed: the call returns at the
    /// limit, a write still waiting for a connection is withdrawn and never runs, and a write
    /// the server had already received is committed in full or not at all.
    case timedOut

    /// The server reported an error: its SQLSTATE code and message.
    case server(code: String, message: String)

    /// The key codec could not encode the key.
    case keyEncodingFailed(any Error)

    /// The value codec could not encode the value; nothing was written.
    case valueEncodingFailed(any Error)

    /// Another process held the load lease of a key and stored no value before the wait's
    /// timeout passed.
    case loadWaitTimedOut(Duration)

    public var description: String {
      switch self {
      case .invalidTableName(let name): "PostgreSQL store: \(String(reflecting: name)) is not a valid table name"
      case .incompatibleTable(let table, let reason): "PostgreSQL store: table \(table) cannot be used: \(reason)"
      case .connectionFailed(let message): "PostgreSQL store: connection failed: \(message)"
      case .timedOut: "PostgreSQL store: the statement timed out"
      case .server(let code, let message): "PostgreSQL store: server error \(code): \(message)"
      case .keyEncodingFailed(let error): "PostgreSQL store: the key could not be encoded: \(error)"
      case .valueEncodingFailed(let error): "PostgreSQL store: the value could not be encoded: \(error)"
      case .loadWaitTimedOut(let timeout): "PostgreSQL store: no value was loaded by another process within \(timeout)"
      }
    }

    /// Whether a write that failed with this error may still have been committed: `true` for
    /// ``connectionFailed(_:)`` and ``timedOut``, which can happen after the server received
    /// the statement (the write is then stored in full or not at all, and a read tells which);
    /// `false` for the others, after which nothing was written.
    ///
    /// ```swift
    /// do {
    ///   try await store.setValue(order, forKey: id)
    /// } catch let error as PostgresStoreError where error.isOutcomeUnknown {
    ///   // Read it back before writing again, or write it again: every write is idempotent.
    /// }
    /// ```
    public var isOutcomeUnknown: Bool {
      switch self {
      case .connectionFailed, .timedOut: true
      case .invalidTableName, .incompatibleTable, .server, .keyEncodingFailed, .valueEncodingFailed,
        .loadWaitTimedOut:
        false
      }
    }

    /// Maps what postgres-nio throws to a store error; cancellation stays `CancellationError`.
    static func mapping(_ error: any Error) -> any Error {
      switch error {
      case let error as PostgresStoreError: return error
      case is CancellationError: return error
      case is LeasedStatement.Lost:
        return PostgresStoreError.connectionFailed("the connection closed before the statement was sent")
      case let error as PostgresTransactionError:
        // A transaction's first failure: beginning it, the body, or committing it.
        if let cause = error.beginError ?? error.closureError ?? error.commitError { return mapping(cause) }
        return PostgresStoreError.connectionFailed(String(describing: error))
      case let error as PSQLError:
        switch error.code {
        case .server:
          let state = error.serverInfo?[.sqlState] ?? ""
          let message = error.serverInfo?[.message] ?? ""
          switch state {
          case "57014": return PostgresStoreError.timedOut
          case "57P01", "57P02", "57P03", "08000", "08003", "08006", "08001", "08004":
            return PostgresStoreError.connectionFailed("\(state): \(message)")
          default: return PostgresStoreError.server(code: state, message: message)
          }
        case .queryCancelled: return CancellationError()
        case .poolClosed: return PostgresStoreError.connectionFailed("the PostgresClient is closed")
        default:
          return PostgresStoreError.connectionFailed(
            String(describing: error.underlying.map { "\($0)" } ?? "\(error.code)"))
        }
      default:
        return PostgresStoreError.connectionFailed(String(describing: error))
      }
    }
  }
#endif
