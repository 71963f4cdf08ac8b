import _KilnSynchronization

/// Fails an attempt with ``NetworkError/timedOut(_:)`` when no response arrived within a
/// limit: the timeout stage of the request pipeline.
///
/// Put it innermost, inside ``Retrying``: the limit is then per attempt, and a timed-out
/// attempt is retried like a transport timeout. It returns at the limit even when the
/// transport ignores cancellation (the attempt runs in a task of its own, which is cancelled
/// and left to end), the same mechanism as KilnQuery's `timeout`. One timer task serves every
/// attempt through the stage (and its copies): an attempt costs no sleeping task, and one that
/// ends early releases its timer at once.
public struct AttemptTimeout: RequestMiddleware {
  /// The longest an attempt may take.
  public let limit: Duration

  /// The clock the limit is measured on.
  public let clock: any Clock<Duration>

  /// The deadlines of the attempts, one timer task for all of them (copies of the stage
  /// share it).
  let deadlines: any Deadlines

  /// Creates the stage.
  ///
  /// - Parameters:
  ///   - limit: The longest an attempt may take.
  ///   - clock: The clock of the limit; the continuous clock by default.
  public init(_ limit: Duration, clock: any Clock<Duration> = ContinuousClock()) {
    self.limit = limit
    self.clock = clock
    deadlines = makeDeadlines(limit: limit, clock: clock)
  }

  public func send(_ request: HTTPRequest, context: RequestContext, next: RequestNext) async throws(NetworkError)
    -> HTTPResponse
  {
    let limit = limit
    let outcome = await Race<Result<HTTPResponse, NetworkError>>.run(
      within: deadlines,
      {
        do throws(NetworkError) {
          return .success(try await next.send(request, context: context))
        } catch {
          return .failure(error)
        }
      },
      timedOut: {
        context.counters?.add(.attemptTimeouts)
        return .failure(.timedOut(limit))
      },
      cancelled: { .failure(.cancelled) }
    )
    return try outcome.get()
  }
}
