import _KilnSynchronization

/// A token bucket that limits retries across every request sharing it, so that a failing
/// server is not hammered by many callers retrying at once.
///
/// Each retry takes one token; each successful response puts back ``tokensPerSuccess``, up
/// to ``capacity``. With no token left, failed requests are not retried (they fail with their
/// own error) until successes refill the bucket. This is the retry throttling of gRPC and
/// Finagle: with the defaults, at most about 1 retry per 10 successes in the long run, plus a
/// burst of 10.
///
/// ```swift
/// let budget = RetryBudget(capacity: 20)
/// var policy = NetworkHandler.RetryPolicy.default
/// policy.budget = budget                       // share it between handlers too
/// ```
public final class RetryBudget: Sendable {
  /// The most tokens the bucket holds, and how many it starts with.
  public let capacity: Double

  /// The tokens each successful response puts back.
  public let tokensPerSuccess: Double

  private let tokens: KilnMutex<Double>

  /// Creates a full bucket.
  ///
  /// - Parameters:
  ///   - capacity: The most tokens held, and the burst of retries allowed; 10 by default.
  ///   - tokensPerSuccess: The tokens each success puts back; 0.1 by default.
  public init(capacity: Double = 10, tokensPerSuccess: Double = 0.1) {
    self.capacity = max(capacity, 0)
    self.tokensPerSuccess = max(tokensPerSuccess, 0)
    self.tokens = KilnMutex(max(capacity, 0))
  }

  /// The tokens available now.
  public var availableTokens: Double {
    tokens.withLock { $0 }
  }

  /// Takes a token for one retry.
  ///
  /// - Returns: `true` when a token was available (and taken), `false` when the retry must
  ///   not be made.
  public func withdraw() -> Bool {
    tokens.withLock { tokens in
      guard tokens >= 1 else { return false }
      tokens -= 1
      return true
    }
  }

  /// Records a successful response, putting back ``tokensPerSuccess``.
  public func recordSuccess() {
    tokens.withLock { tokens in
      tokens = min(capacity, tokens + tokensPerSuccess)
    }
  }
}
