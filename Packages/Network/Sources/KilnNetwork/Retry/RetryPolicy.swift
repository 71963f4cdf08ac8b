public import Foundation
// The policy is built from KilnCore's RetryBackoff and RetryJitter, which KilnQuery re-exports
// and KilnNetwork re-exports in turn, so that `import KilnNetwork` is enough to write one.
@_exported public import KilnQuery

extension NetworkHandler {
  /// When a ``NetworkHandler`` sends a failed request again, and how long it waits first.
  ///
  /// ```swift
  /// // The default: 3 attempts in all, 0.5 s then 1 s (doubling, at most 30 s) with full
  /// // jitter; idempotent methods only; 408, 429, 500, 502, 503, 504 and transient transport
  /// // errors; Retry-After honoured up to 60 s; a shared retry budget.
  /// let handler = NetworkHandler(transport: transport, retryPolicy: .default)
  ///
  /// // POST too, 5 attempts, and exact delays for a test:
  /// var policy = NetworkHandler.RetryPolicy(maxAttempts: 5, jitter: .none)
  /// policy.retryableMethods.insert(.post)
  /// ```
  ///
  /// It is named `NetworkHandler.RetryPolicy` so that it never clashes with KilnCore's
  /// generic `RetryPolicy`; it reuses KilnCore's `RetryBackoff` and
  /// `RetryJitter`. Every wait is a sleep on the handler's clock.
  public struct RetryPolicy: Sendable {
    /// The most attempts in all, the first one included; at least 1.
    ///
    /// - Precondition: Setting it below 1 stops the program, as KilnCore's `RetryPolicy`
    ///   does: zero attempts would send nothing and answer nothing.
    public var maxAttempts: Int {
      didSet { Self.check(maxAttempts) }
    }

    /// The delay before each retry, before jitter.
    public var backoff: RetryBackoff

    /// The randomness put into each backoff delay; inject a fixed source (or `.none`)
    /// for exact delays in tests.
    public var jitter: RetryJitter

    /// The methods retried: the idempotent ones (`GET`, `HEAD`, `OPTIONS`, `PUT`, `DELETE`,
    /// `TRACE`, `QUERY`) by default. Insert `.post` or `.patch` to retry them too.
    public var retryableMethods: Set<HTTPMethod>

    /// Whether a request of any method carrying an `Idempotency-Key` header is retried; `true`
    /// by default (the server de-duplicates it).
    public var retriesRequestsWithIdempotencyKey: Bool

    /// The response statuses retried: 408, 429, 500, 502, 503 and 504 by default.
    public var retryableStatuses: Set<Int>

    /// Whether transient transport errors (refused, reset or lost connections, transport
    /// timeouts) and the handler's own timeout are retried; `true` by default.
    public var retriesTransportErrors: Bool

    /// The longest `Retry-After` honoured: a longer one waits this long. 60 s by default;
    /// `nil` to ignore `Retry-After` and always use the backoff.
    public var maximumRetryAfter: Duration?

    /// The bucket limiting retries across every request that shares it, or `nil` for none.
    public var budget: RetryBudget?

    /// Creates a policy.
    ///
    /// - Parameters:
    ///   - maxAttempts: The most attempts in all, the first one included; 3 by default.
    ///   - backoff: The delay before each retry; 0.5 s doubling up to 30 s by default.
    ///   - jitter: The randomness put into each delay; full jitter by default.
    ///   - retryableMethods: The methods retried; the idempotent ones by default.
    ///   - retriesRequestsWithIdempotencyKey: Whether any request with an `Idempotency-Key`
    ///     header is retried; `true` by default.
    ///   - retryableStatuses: The statuses retried; 408, 429, 500, 502, 503, 504 by default.
    ///   - retriesTransportErrors: Whether transient transport errors are retried.
    ///   - maximumRetryAfter: The cap on `Retry-After`; 60 s by default, `nil` to ignore it.
    ///   - budget: The retry budget shared by the requests; a new one (10 tokens) by default.
    public init(
      maxAttempts: Int = 3,
      backoff: RetryBackoff = .exponential(initial: .milliseconds(500), multiplier: 2, maximum: .seconds(30)),
      jitter: RetryJitter = .full,
      retryableMethods: Set<HTTPMethod> = RetryPolicy.idempotentMethods,
      retriesRequestsWithIdempotencyKey: Bool = true,
      retryableStatuses: Set<Int> = [408, 429, 500, 502, 503, 504],
      retriesTransportErrors: Bool = true,
      maximumRetryAfter: Duration? = .seconds(60),
      budget: RetryBudget? = RetryBudget()
    ) {
      Self.check(maxAttempts)
      self.maxAttempts = maxAttempts
      self.backoff = backoff
      self.jitter = jitter
      self.retryableMethods = retryableMethods
      self.retriesRequestsWithIdempotencyKey = retriesRequestsWithIdempotencyKey
      self.retryableStatuses = retryableStatuses
      self.retriesTransportErrors = retriesTransportErrors
      self.maximumRetryAfter = maximumRetryAfter
      self.budget = budget
    }

    /// `GET`, `HEAD`, `OPTIONS`, `PUT`, `DELETE`, `TRACE` and `QUERY`.
    public static let idempotentMethods: Set<HTTPMethod> = [.get, .head, .options, .put, .delete, .trace, .query]

    /// 3 attempts, 0.5 s doubling up to 30 s with full jitter, and the other defaults of
    /// ``init(maxAttempts:backoff:jitter:retryableMethods:retriesRequestsWithIdempotencyKey:retryableStatuses:retriesTransportErrors:maximumRetryAfter:budget:)``.
    public static var `default`: RetryPolicy {
      RetryPolicy()
    }

    /// One attempt: never retries.
    public static var never: RetryPolicy {
      RetryPolicy(maxAttempts: 1, backoff: .immediate, jitter: .none, budget: nil)
    }

    /// Checks the policy; it always passes, since ``maxAttempts`` is checked when it is set.
    @available(*, deprecated, message: "maxAttempts is checked when it is set; nothing is left to validate")
    public func validate() throws(NetworkError) {}

    /// The same check, with the same words, as KilnCore's `RetryPolicy`.
    private static func check(_ maxAttempts: Int) {
      precondition(maxAttempts >= 1, "a retry policy needs at least 1 attempt, got maxAttempts: \(maxAttempts)")
    }

    /// Whether `request` may be sent again at all: its method is in ``retryableMethods``, or it
    /// carries an `Idempotency-Key` and ``retriesRequestsWithIdempotencyKey`` is set.
    ///
    /// - Parameter request: The request.
    public func allowsRetry(of request: HTTPRequest) -> Bool {
      retryableMethods.contains(request.method)
        || (retriesRequestsWithIdempotencyKey && request.headers.contains("Idempotency-Key"))
    }

    /// Whether the failure is of a kind retried: a status in ``retryableStatuses``, or (with
    /// ``retriesTransportErrors``) a transient transport error or the handler's timeout.
    ///
    /// - Parameter error: The failure of the attempt.
    public func isRetryable(_ error: NetworkError) -> Bool {
      switch error {
      case .status(let response): retryableStatuses.contains(response.status)
      case .transport(let transportError): retriesTransportErrors && transportError.isTransient
      case .timedOut: retriesTransportErrors
      default: false
      }
    }

    /// Whether a request that failed with `error` on attempt number `attempt` is sent again:
    /// attempts remain, the request may be retried and the failure is retryable. (The budget
    /// is consulted separately, only when this is `true`.)
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - error: The failure of the attempt.
    ///   - attempt: The number of the attempt that failed, from 1.
    public func allowsRetry(of request: HTTPRequest, after error: NetworkError, attempt: Int) -> Bool {
      attempt < maxAttempts && allowsRetry(of: request) && isRetryable(error)
    }

    /// How long to wait after `error` ended attempt number `attempt`: the response's
    /// `Retry-After` (capped at ``maximumRetryAfter``) when it has a valid one, otherwise the
    /// backoff with jitter.
    ///
    /// - Parameters:
    ///   - error: The failure of the attempt.
    ///   - attempt: The number of the attempt that failed, from 1.
    ///   - now: The current date, for a `Retry-After` given as an HTTP date.
    public func delay(after error: NetworkError, attempt: Int, now: Date) -> Duration {
      cappedRetryAfter(after: error, now: now) ?? jitter.apply(to: backoff.delay(beforeRetry: attempt))
    }

    /// The wait the failed response asks for, capped at ``maximumRetryAfter``; `nil` when
    /// there is none or `Retry-After` is ignored.
    func cappedRetryAfter(after error: NetworkError, now: Date) -> Duration? {
      guard let maximumRetryAfter, let response = error.response,
        let retryAfter = Self.retryAfter(in: response, now: now)
      else { return nil }
      return min(retryAfter, maximumRetryAfter)
    }

    /// The wait a response asks for in its `Retry-After` header (RFC 9110 §10.2.3): a number of
    /// seconds, or an HTTP date (a date in the past is no wait).
    ///
    /// - Parameters:
    ///   - response: The response.
    ///   - now: The current date.
    /// - Returns: The wait, or `nil` when there is no header or it is malformed (not digits,
    ///   negative, fractional or not a valid HTTP date).
    public static func retryAfter(in response: HTTPResponse, now: Date) -> Duration? {
      guard let value = response.headers.first("Retry-After") else { return nil }
      if !value.isEmpty, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
        // Any number of digits: a huge number is clamped rather than overflowing.
        guard let seconds = Int64(value) else { return .seconds(Int64.max / 1_000_000_000_000) }
        return .seconds(seconds)
      }
      guard let date = HTTPDate.parse(value) else { return nil }
      let seconds = date.timeIntervalSince(now)
      return seconds > 0 ? .milliseconds(Int64((seconds * 1000).rounded(.up))) : .zero
    }
  }
}
