#if PostgreSQL
  import _KilnSynchronization

  /// Runs one ``PostgresStore`` operation within a time limit that really bounds it.
  ///
  /// A task group cannot: it returns only once every child has, and a statement already
  /// sent ignores cancellation — postgres-nio awaits the server's answer without a
  /// cancellation handler, so a statement waiting on a lock, or one whose answer never
  /// comes, holds its caller as long as that lasts. Here the operation and the timer race
  /// (`Race.run(within:clock:_:timedOut:cancelled:)`, shared with KilnQuery's `timeout`):
  /// whichever finishes first — the operation, the timer, or the caller's cancellation —
  /// resumes the caller and cancels the other task without waiting for it. A cancelled
  /// request still queued for a connection leaves the pool's queue, so it never runs later;
  /// a statement already sent finishes (or fails) on its own.
  enum OperationDeadline {
    /// Runs `operation`, throwing `timedOut` when it has not finished after `limit` on
    /// `clock`, and `CancellationError` at once when the calling task is cancelled.
    static func run<Value: Sendable>(
      within limit: Duration,
      clock: any Clock<Duration>,
      timedOut: any Error,
      _ operation: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
      try await Race<Result<Value, any Error>>.run(
        within: limit,
        clock: clock,
        {
          do {
            return .success(try await operation())
          } catch {
            return .failure(error)
          }
        },
        timedOut: { .failure(timedOut) },
        cancelled: { .failure(CancellationError()) }
      ).get()
    }
  }
#endif
