/// When and how a failed load is tried again: how many attempts, which failures, and how long
/// to wait in between.
///
/// ```swift
/// // Everyday: up to 3 attempts, 0.5 s doubling up to 30 s, full jitter.
/// let feed = network.retry(.default)
///
/// // Only transient failures, 5 attempts, 1 s apart:
/// let upload = uploader.retry(.constant(maxAttempts: 5, delay: .seconds(1)) { error, _ in
///   (error as? URLError)?.code == .timedOut
/// })
///
/// // A server-given pause wins over the backoff (a network layer honouring `Retry-After`):
/// var policy = RetryPolicy<NetworkError>.exponential(maxAttempts: 4)
/// policy.delayOverride = { error, _ in error.retryAfter }
/// ```
///
/// The policy is a plain value: ``delay(after:attempt:)`` and ``allowsRetry(after:attempt:)``
/// answer for one failure, so any retry loop can use it: KilnQuery's `retry(_:clock:onRetry:)`
/// and `RetryPolicy.run`, KilnNetwork's `Retrying` stage, a repository's outbox sender.
public struct RetryPolicy<Failure: Error>: Sendable {
  /// The most attempts in all, the first one included; at least 1.
  public let maxAttempts: Int

  /// The delay before each retry, before jitter.
  public var backoff: RetryBackoff

  /// The randomness put into each backoff delay.
  public var jitter: RetryJitter

  /// Whether a failure may be retried, given the failure and the number of the attempt that
  /// failed (from 1).
  ///
  /// The default retries every failure but `CancellationError`.
  public var shouldRetry: @Sendable (_ failure: Failure, _ attempt: Int) -> Bool

  /// A delay chosen by the failure itself — such as an HTTP `Retry-After` — used instead of
  /// the backoff and jitter when it returns one; `nil` to always use the backoff.
  ///
  /// The closure gets the failure and the number of the attempt that failed (from 1).
  public var delayOverride: (@Sendable (_ failure: Failure, _ attempt: Int) -> Duration?)?

  /// Creates a policy.
  ///
  /// - Parameters:
  ///   - maxAttempts: The most attempts in all, the first one included. `1` never retries.
  ///   - backoff: The delay before each retry, before jitter.
  ///   - jitter: The randomness put into each backoff delay.
  ///   - shouldRetry: Whether a failure may be retried; by default every failure but
  ///     `CancellationError`.
  ///   - delayOverride: A delay chosen by the failure (such as `Retry-After`), used instead of
  ///     the backoff when it returns one.
  /// - Precondition: `maxAttempts` is at least 1. Zero or fewer attempts would load nothing
  ///   and deliver nothing, so it is rejected rather than silently ignored.
  public init(
    maxAttempts: Int = 3,
    backoff: RetryBackoff = .exponential(),
    jitter: RetryJitter = .full,
    shouldRetry: @escaping @Sendable (_ failure: Failure, _ attempt: Int) -> Bool = { failure, _ in
      !(failure is CancellationError)
    },
    delayOverride: (@Sendable (_ failure: Failure, _ attempt: Int) -> Duration?)? = nil
  ) {
    precondition(maxAttempts >= 1, "a retry policy needs at least 1 attempt, got maxAttempts: \(maxAttempts)")
    self.maxAttempts = maxAttempts
    self.backoff = backoff
    self.jitter = jitter
    self.delayOverride = delayOverride
    self.shouldRetry = shouldRetry
  }

  /// Whether the load should be tried again after `failure` ended attempt number `attempt`.
  ///
  /// - Parameters:
  ///   - failure: The failure of the attempt.
  ///   - attempt: The number of the attempt that failed, from 1.
  /// - Returns: `true` when attempts remain and ``shouldRetry`` accepts the failure.
  public func allowsRetry(after failure: Failure, attempt: Int) -> Bool {
    attempt < maxAttempts && shouldRetry(failure, attempt)
  }

  /// How long to wait after `failure` ended attempt number `attempt`, before the next one.
  ///
  /// - Parameters:
  ///   - failure: The failure of the attempt.
  ///   - attempt: The number of the attempt that failed, from 1.
  /// - Returns: ``delayOverride``'s delay when it gives one (never negative), otherwise the
  ///   backoff's delay with jitter.
  public func delay(after failure: Failure, attempt: Int) -> Duration {
    if let override = delayOverride?(failure, attempt) {
      return max(override, .zero)
    }
    return jitter.apply(to: backoff.delay(beforeRetry: attempt))
  }
}

extension RetryPolicy {
  /// Up to 3 attempts, waiting 0.5 s, then 1 s (doubling up to 30 s), with full jitter;
  /// every failure but `CancellationError` is retried.
  public static var `default`: RetryPolicy {
    RetryPolicy()
  }

  /// Never retries: one attempt.
  public static var never: RetryPolicy {
    RetryPolicy(maxAttempts: 1, backoff: .immediate, jitter: .none)
  }

  /// The same delay before every retry.
  ///
  /// - Parameters:
  ///   - maxAttempts: The most attempts in all, the first one included; at least 1.
  ///   - delay: The delay before each retry.
  ///   - jitter: The randomness put into each delay; none by default.
  ///   - shouldRetry: Whether a failure may be retried; by default every failure but
  ///     `CancellationError`.
  public static func constant(
    maxAttempts: Int,
    delay: Duration,
    jitter: RetryJitter = .none,
    shouldRetry: @escaping @Sendable (_ failure: Failure, _ attempt: Int) -> Bool = { failure, _ in
      !(failure is CancellationError)
    }
  ) -> RetryPolicy {
    RetryPolicy(maxAttempts: maxAttempts, backoff: .constant(delay), jitter: jitter, shouldRetry: shouldRetry)
  }

  /// A delay that doubles (or grows by `multiplier`) before each retry, up to `maximum`, with
  /// full jitter by default.
  ///
  /// - Parameters:
  ///   - maxAttempts: The most attempts in all, the first one included; at least 1.
  ///   - initial: The delay before the first retry.
  ///   - multiplier: How much each delay grows over the previous one; at least 1.
  ///   - maximum: The cap on each delay.
  ///   - jitter: The randomness put into each delay.
  ///   - shouldRetry: Whether a failure may be retried; by default every failure but
  ///     `CancellationError`.
  public static func exponential(
    maxAttempts: Int = 3,
    initial: Duration = .milliseconds(500),
    multiplier: Double = 2,
    maximum: Duration = .seconds(30),
    jitter: RetryJitter = .full,
    shouldRetry: @escaping @Sendable (_ failure: Failure, _ attempt: Int) -> Bool = { failure, _ in
      !(failure is CancellationError)
    }
  ) -> RetryPolicy {
    RetryPolicy(
      maxAttempts: maxAttempts,
      backoff: .exponential(initial: initial, multiplier: multiplier, maximum: maximum),
      jitter: jitter,
      shouldRetry: shouldRetry
    )
  }
}
