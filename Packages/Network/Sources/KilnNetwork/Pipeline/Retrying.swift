public import Foundation
import KilnCore
import _KilnSynchronization

/// Sends a failed request again as a ``NetworkHandler/RetryPolicy`` says: the stage of the
/// request pipeline that retries.
///
/// Each retry goes through every stage after this one again, so put it outside
/// ``Authenticating`` (a retried attempt gets the current credential) and ``AttemptTimeout``
/// (the limit is per attempt), and inside ``HTTPCaching`` (a fresh hit is never retried).
///
/// A response with a retryable status (such as 503) is sent again while attempts remain; the
/// last one is returned as it is, for ``NetworkHandler`` to validate. The waits run KilnQuery's
/// retry loop (`RetryPolicy.run`) on ``clock``, honour `Retry-After` up to the policy's cap,
/// and stop at once when the task is cancelled, with ``NetworkError/cancelled``.
public struct Retrying: RequestMiddleware {
  /// When failed requests are sent again.
  public let policy: NetworkHandler.RetryPolicy

  /// The clock the waits are slept on.
  public let clock: any Clock<Duration>

  /// The current date, for a `Retry-After` given as an HTTP date.
  public let now: @Sendable () -> Date

  /// Creates the stage.
  ///
  /// - Parameters:
  ///   - policy: When failed requests are sent again.
  ///   - clock: The clock of the waits; the continuous clock by default.
  ///   - now: The current date; by default the clock's own (`dateProvider(for: clock)`).
  /// - Precondition: The policy's `maxAttempts` is at least 1, as for every retry policy in
  ///   Kiln.
  public init(
    _ policy: NetworkHandler.RetryPolicy,
    clock: any Clock<Duration> = ContinuousClock(),
    now: (@Sendable () -> Date)? = nil
  ) {
    self.policy = policy
    self.clock = clock
    self.now = now ?? dateProvider(for: clock)
  }

  public func send(_ request: HTTPRequest, context: RequestContext, next: RequestNext) async throws(NetworkError)
    -> HTTPResponse
  {
    let rules = policy
    let retryPolicy = rules.retryPolicy(for: request, now: now)
    let counters = context.counters
    #if Tracing
      let span = RequestTracing.currentSpan
      let observed = counters != nil || span != nil
    #else
      let observed = counters != nil
    #endif
    // Counted (and traced) once the loop has decided to retry and the task is not cancelled:
    // just before the wait for the next attempt.
    var onRetry: (@Sendable (NetworkError, Int, Duration) -> Void)?
    if observed {
      onRetry = { (error: NetworkError, attempt: Int, delay: Duration) in
        if case .status = error {
          counters?.add(.retriesAfterStatus)
        } else {
          counters?.add(.retriesAfterError)
        }
        #if Tracing
          if let span { RequestTracing.recordRetry(after: error, attempt: attempt, delay: delay, in: span) }
        #endif
      }
    }
    do {
      return try await retryPolicy.run(clock: clock, onRetry: onRetry) { attempt throws(NetworkError) -> HTTPResponse in
        guard !Task.isCancelled else { throw .cancelled }
        var context = context
        context.attempt = attempt
        let response = try await next.send(request, context: context)
        if rules.retryableStatuses.contains(response.status) {
          // A failure for the loop to judge; given back as a response when it ends there.
          throw .status(response)
        }
        if (200..<400).contains(response.status) { rules.budget?.recordSuccess() }
        return response
      }
    } catch .status(let response) {
      if Task.isCancelled { throw .cancelled }
      return response
    } catch {
      if Task.isCancelled || error.isCancellation { throw .cancelled }
      throw error
    }
  }
}

extension NetworkHandler.RetryPolicy {
  /// These HTTP rules as KilnQuery's retry policy for one request: the policy that Kiln's one
  /// retry loop runs.
  ///
  /// - Parameters:
  ///   - request: The request: its method and `Idempotency-Key` decide whether it is retried
  ///     at all.
  ///   - now: The current date, for a `Retry-After` given as an HTTP date.
  /// - Returns: A policy whose `shouldRetry` applies the methods, statuses, transport errors
  ///   and budget, and whose `delayOverride` honours `Retry-After` up to the cap.
  public func retryPolicy(
    for request: HTTPRequest, now: @escaping @Sendable () -> Date = Date.init
  ) -> KilnCore.RetryPolicy<NetworkError> {
    let rules = self
    let retriesRequest = allowsRetry(of: request)
    var policy = KilnCore.RetryPolicy<NetworkError>(
      maxAttempts: maxAttempts, backoff: backoff, jitter: jitter,
      shouldRetry: { error, _ in
        retriesRequest && rules.isRetryable(error) && (rules.budget?.withdraw() ?? true)
      })
    if maximumRetryAfter != nil {
      policy.delayOverride = { error, _ in rules.cappedRetryAfter(after: error, now: now()) }
    }
    return policy
  }
}
