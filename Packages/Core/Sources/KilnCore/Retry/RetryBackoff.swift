/// How long to wait before each retry, before jitter: constant or exponential with a cap.
///
/// ```swift
/// RetryBackoff.constant(.seconds(1))                 // 1 s, 1 s, 1 s …
/// RetryBackoff.exponential(initial: .milliseconds(500), maximum: .seconds(30))
///                                                    // 0.5 s, 1 s, 2 s, 4 s … at most 30 s
/// ```
@frozen
public struct RetryBackoff: Hashable, Sendable, CustomStringConvertible {
  @usableFromInline
  enum Kind: Hashable, Sendable {
    case constant(Duration)
    case exponential(initial: Duration, multiplier: Double, maximum: Duration)
  }

  @usableFromInline
  let kind: Kind

  @inlinable
  init(_ kind: Kind) {
    self.kind = kind
  }

  /// The same delay before every retry.
  ///
  /// - Parameter delay: The delay; must not be negative.
  @inlinable
  public static func constant(_ delay: Duration) -> RetryBackoff {
    precondition(delay >= .zero, "a retry delay must not be negative, got \(delay)")
    return RetryBackoff(.constant(delay))
  }

  /// No delay: retries start at once.
  @inlinable
  public static var immediate: RetryBackoff {
    .constant(.zero)
  }

  /// A delay that grows by `multiplier` after each retry, up to `maximum`:
  /// `min(initial × multiplier^(retry − 1), maximum)`.
  ///
  /// The defaults — 0.5 s doubling up to 30 s — suit network requests.
  ///
  /// - Parameters:
  ///   - initial: The delay before the first retry; must not be negative.
  ///   - multiplier: How much each delay grows over the previous one; at least 1.
  ///   - maximum: The cap; no delay is longer. Must not be negative.
  @inlinable
  public static func exponential(
    initial: Duration = .milliseconds(500),
    multiplier: Double = 2,
    maximum: Duration = .seconds(30)
  ) -> RetryBackoff {
    precondition(initial >= .zero, "the initial retry delay must not be negative, got \(initial)")
    precondition(multiplier >= 1 && multiplier.isFinite, "the backoff multiplier must be at least 1, got \(multiplier)")
    precondition(maximum >= .zero, "the maximum retry delay must not be negative, got \(maximum)")
    return RetryBackoff(.exponential(initial: initial, multiplier: multiplier, maximum: maximum))
  }

  /// The delay before retry number `retry` (1 for the first retry, after the first attempt
  /// failed), before jitter.
  ///
  /// - Parameter retry: Which retry, from 1.
  /// - Returns: The delay; exact when the multiplier is a whole number.
  public func delay(beforeRetry retry: Int) -> Duration {
    precondition(retry >= 1, "retries are numbered from 1, got \(retry)")
    switch kind {
    case .constant(let delay):
      return delay
    case .exponential(let initial, let multiplier, let maximum):
      var delay = initial
      var step = 1
      // Multiply step by step so a whole multiplier stays exact in `Duration`'s integer
      // attoseconds, and stop at the cap so nothing overflows however many retries.
      while step < retry, delay < maximum, .zero < delay, multiplier > 1 {
        if delay.timeInterval * multiplier >= maximum.timeInterval {
          return maximum
        }
        if let whole = Int(exactly: multiplier) {
          delay *= whole
        } else {
          delay = delay * multiplier
        }
        step += 1
      }
      return min(delay, maximum)
    }
  }

  public var description: String {
    switch kind {
    case .constant(let delay):
      "constant(\(delay))"
    case .exponential(let initial, let multiplier, let maximum):
      "exponential(initial: \(initial), multiplier: \(multiplier), maximum: \(maximum))"
    }
  }
}
