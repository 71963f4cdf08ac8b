#if PostgreSQL
  import _KilnSynchronization

  /// Runs one ``PostgresStore`` operation within a time limit that really bounds it.
  ///
  /// A task group cannot: it returns only once every child has, and a statement already
  /// sent ignores cancellation — postgres-nio awaits the server's answer without a
  /// cancellation handler, so a statement waiting on a lock, or one whose answer never
  /// comes, holds its caller as long as that lasts. Here the operation and the timer race
  /// (`Race`, shared with KilnQuery's `timeout`): whichever finishes first — the operation,
  /// the timer, or the caller's cancellation — resumes the caller and cancels the operation
  /// without waiting for it. A cancelled request still queued for a connection leaves the
  /// pool's queue, so it never runs later.
  ///
  /// The timer outlives the caller: when the operation is still running at the limit — the
  /// caller timed out, or was cancelled and left — `overrun` runs (the store closes the
  /// connection the statement is stuck on, which fails the statement and gives the
  /// connection back; otherwise a connection that went silent would stay leased, and the
  /// pool would shrink by one connection per abandoned statement).
  enum OperationDeadline {
    /// Runs `operation`, throwing `timedOut` when it has not finished after `limit` on
    /// `clock`, and `CancellationError` at once when the calling task is cancelled; calls
    /// `overrun` when the operation is still running at the limit.
    static func run<Value: Sendable>(
      within limit: Duration,
      clock: any Clock<Duration>,
      timedOut: any Error,
      overrun: @escaping @Sendable () -> Void = {},
      _ operation: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
      let race = Race<Result<Value, any Error>>()
      // Not tracked by the race: it must not end with the caller's cancellation.
      let timer = Task {
        do {
          try await clock.sleep(for: limit)
        } catch {
          return  // The operation finished.
        }
        overrun()
        race.resolve(.failure(timedOut))
      }
      race.track(
        Task {
          let result: Result<Value, any Error>
          do {
            result = .success(try await operation())
          } catch {
            result = .failure(error)
          }
          timer.cancel()
          race.resolve(result)
        })
      return try await race.wait(orWhenCancelled: { .failure(CancellationError()) }).get()
    }
  }
#endif
