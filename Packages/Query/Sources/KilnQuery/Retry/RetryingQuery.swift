/// A query that tries its upstream again after a failure, as a `RetryPolicy` (KilnCore) says.
///
/// Create one with ``KilnCore/Query/retry(_:clock:onRetry:)``.
@frozen
public struct RetryingQuery<Upstream: Query>: Query {
  public typealias Success = Upstream.Success
  public typealias Failure = Upstream.Failure

  /// The query tried again after a failure.
  public let upstream: Upstream

  /// How many attempts, which failures, and how long to wait.
  public let policy: RetryPolicy<Failure>

  /// The clock the delays are slept on.
  public let clock: any Clock<Duration>

  @usableFromInline
  let onRetry: (@Sendable (_ failure: Failure, _ attempt: Int, _ delay: Duration) -> Void)?

  @inlinable
  init(
    upstream: Upstream,
    policy: RetryPolicy<Failure>,
    clock: any Clock<Duration>,
    onRetry: (@Sendable (_ failure: Failure, _ attempt: Int, _ delay: Duration) -> Void)?
  ) {
    self.upstream = upstream
    self.policy = policy
    self.clock = clock
    self.onRetry = onRetry
  }

  @inlinable
  public func load() async throws(Failure) -> Success {
    let upstream = upstream
    return try await policy.run(clock: clock, onRetry: onRetry) { _ async throws(Failure) -> Success in
      try await upstream.load()
    }
  }
}

extension RetryPolicy {
  /// Runs `operation` until it succeeds or the policy gives up: the one retry loop of Kiln,
  /// behind ``KilnCore/Query/retry(_:clock:onRetry:)`` and KilnNetwork's HTTP retries.
  ///
  /// ```swift
  /// let page = try await RetryPolicy<any Error>.default.run { attempt in
  ///   try await fetchPage(attempt: attempt)
  /// }
  /// ```
  ///
  /// When the task is cancelled, retrying stops at once (also in the middle of a delay) and
  /// the call throws `CancellationError` if `Failure` can hold one, else the last failure.
  ///
  /// - Parameters:
  ///   - clock: The clock the delays are slept on; pass a `ManualClock` in tests.
  ///   - onRetry: Called before each delay with the failure, the number of the attempt that
  ///     failed (from 1) and the delay about to be slept.
  ///   - operation: One attempt, given its number (from 1).
  /// - Returns: The value of the first attempt that succeeded.
  /// - Throws: The failure of the last attempt, or of one the policy's `shouldRetry` refused.
  @inlinable
  public func run<Success>(
    clock: any Clock<Duration> = ContinuousClock(),
    onRetry: (@Sendable (_ failure: Failure, _ attempt: Int, _ delay: Duration) -> Void)? = nil,
    _ operation: (_ attempt: Int) async throws(Failure) -> Success
  ) async throws(Failure) -> Success {
    var attempt = 1
    while true {
      let failure: Failure
      do throws(Failure) {
        return try await operation(attempt)
      } catch {
        failure = error
      }
      try await pause(after: failure, attempt: attempt, clock: clock, onRetry: onRetry)
      attempt += 1
    }
  }

  /// Waits before the next attempt, or throws when there is none.
  @usableFromInline
  func pause(
    after failure: Failure, attempt: Int, clock: any Clock<Duration>,
    onRetry: (@Sendable (_ failure: Failure, _ attempt: Int, _ delay: Duration) -> Void)?
  ) async throws(Failure) {
    guard allowsRetry(after: failure, attempt: attempt) else { throw failure }
    guard !Task.isCancelled else { throw Self.cancellation(or: failure) }
    let delay = delay(after: failure, attempt: attempt)
    onRetry?(failure, attempt, delay)
    if delay > .zero {
      do {
        try await clock.sleep(for: delay)
      } catch {
        throw Self.cancellation(or: failure)
      }
    }
    guard !Task.isCancelled else { throw Self.cancellation(or: failure) }
  }

  /// A `CancellationError` if `Failure` can hold one, else the last failure.
  @usableFromInline
  static func cancellation(or failure: Failure) -> Failure {
    CancellationError() as? Failure ?? failure
  }
}

extension Query {
  /// Tries the load again after a failure, as `policy` says: how many attempts, which
  /// failures, and how long to wait in between.
  ///
  /// ```swift
  /// let feed = network.retry(.exponential(maxAttempts: 4, initial: .seconds(1)))
  /// ```
  ///
  /// The delays are slept on `clock`; pass a `ManualClock` (from `KilnTesting`) in tests.
  /// When the task is cancelled, retrying stops at once — also in the middle of a delay — and
  /// the load throws `CancellationError` if `Failure` can hold one, else the last failure.
  ///
  /// - Parameters:
  ///   - policy: The attempts, the failures to retry and the delays.
  ///   - clock: The clock to sleep the delays on.
  ///   - onRetry: Called before each delay with the failure, the number of the attempt that
  ///     failed (from 1) and the delay about to be slept: for logs and metrics.
  /// - Returns: A query that retries its failed loads.
  /// - Throws: When the last allowed attempt fails, or a failure is not retryable, that
  ///   failure.
  @inlinable
  public func retry(
    _ policy: RetryPolicy<Failure> = .default,
    clock: any Clock<Duration> = ContinuousClock(),
    onRetry: (@Sendable (_ failure: Failure, _ attempt: Int, _ delay: Duration) -> Void)? = nil
  ) -> RetryingQuery<Self> {
    RetryingQuery(upstream: self, policy: policy, clock: clock, onRetry: onRetry)
  }
}
