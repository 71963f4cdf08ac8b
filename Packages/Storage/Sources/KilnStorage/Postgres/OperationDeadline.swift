#if PostgreSQL
  import _KilnSynchronization

  /// Runs one ``PostgresStore`` operation within a time limit that really bounds it.
  ///
  /// A task group cannot: it returns only once every child has, and a statement already
  /// sent ignores cancellation — postgres-nio awaits the server's answer without a
  /// cancellation handler, so a statement waiting on a lock, or one whose answer never
  /// comes, holds its caller as long as that lasts. Here the operation and the timer run in
  /// unstructured tasks; whichever finishes first — the operation, the timer, or the
  /// caller's cancellation — resumes the caller and cancels the other task without waiting
  /// for it. A cancelled request still queued for a connection leaves the pool's queue, so
  /// it never runs later; a statement already sent finishes (or fails) on its own.
  final class OperationDeadline<Value: Sendable>: Sendable {
    private struct State {
      var outcome: Result<Value, any Error>?
      var continuation: UnsafeContinuation<Result<Value, any Error>, Never>?
      var tasks: [Task<Void, Never>] = []
    }

    private let state = KilnMutex(State())

    private init() {}

    /// Runs `operation`, throwing `timedOut` when it has not finished after `limit` on
    /// `clock`, and `CancellationError` at once when the calling task is cancelled.
    static func run(
      within limit: Duration,
      clock: any Clock<Duration>,
      timedOut: any Error,
      _ operation: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
      let deadline = OperationDeadline()
      deadline.track(
        Task {
          do {
            deadline.finish(.success(try await operation()))
          } catch {
            deadline.finish(.failure(error))
          }
        })
      deadline.track(
        Task {
          do {
            try await clock.sleep(for: limit)
            deadline.finish(.failure(timedOut))
          } catch {
            // Cancelled: the operation finished first, or the caller was cancelled.
          }
        })
      return try await deadline.wait().get()
    }

    /// Tracks a task to cancel once the outcome is known (at once if it already is).
    private func track(_ task: Task<Void, Never>) {
      let finished = state.withLock { state in
        if state.outcome != nil { return true }
        state.tasks.append(task)
        return false
      }
      if finished { task.cancel() }
    }

    /// Records the first outcome, resumes the caller and cancels every task; later outcomes
    /// are dropped.
    private func finish(_ outcome: Result<Value, any Error>) {
      let winner: (UnsafeContinuation<Result<Value, any Error>, Never>?, [Task<Void, Never>])? = state.withLock {
        state in
        guard state.outcome == nil else { return nil }
        state.outcome = outcome
        defer {
          state.continuation = nil
          state.tasks = []
        }
        return (state.continuation, state.tasks)
      }
      guard let (continuation, tasks) = winner else { return }
      continuation?.resume(returning: outcome)
      for task in tasks { task.cancel() }
    }

    private func wait() async -> Result<Value, any Error> {
      await withTaskCancellationHandler {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Result<Value, any Error>, Never>) in
          let outcome: Result<Value, any Error>? = state.withLock { state in
            if let outcome = state.outcome { return outcome }
            state.continuation = continuation
            return nil
          }
          if let outcome { continuation.resume(returning: outcome) }
        }
      } onCancel: {
        finish(.failure(CancellationError()))
      }
    }
  }
#endif
