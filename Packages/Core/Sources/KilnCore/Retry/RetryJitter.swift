/// How much randomness to put into each retry delay, so that clients that failed together do
/// not retry together.
///
/// ```swift
/// RetryJitter.full          // uniform in 0 … delay (AWS's "full jitter"; the default)
/// RetryJitter.equal         // uniform in delay/2 … delay
/// RetryJitter.none          // exactly the backoff's delay
/// RetryJitter.full(random: { 0.5 })   // a fixed random source, for tests
/// ```
public struct RetryJitter: Sendable, CustomStringConvertible {
  @usableFromInline
  enum Kind: Sendable {
    case none
    case full
    case equal
  }

  @usableFromInline
  let kind: Kind

  @usableFromInline
  let random: @Sendable () -> Double

  @inlinable
  init(kind: Kind, random: @escaping @Sendable () -> Double) {
    self.kind = kind
    self.random = random
  }

  /// The system's random numbers, uniform in `0 ... 1`.
  public static let systemRandom: @Sendable () -> Double = { Double.random(in: 0...1) }

  /// No jitter: every delay is exactly the backoff's.
  public static var none: RetryJitter {
    RetryJitter(kind: .none, random: systemRandom)
  }

  /// Full jitter: each delay is uniform in `0 ... delay`.
  public static var full: RetryJitter {
    .full(random: systemRandom)
  }

  /// Full jitter with an injected random source.
  ///
  /// - Parameter random: Returns a number in `0 ... 1` (values outside are clamped).
  public static func full(random: @escaping @Sendable () -> Double) -> RetryJitter {
    RetryJitter(kind: .full, random: random)
  }

  /// Equal jitter: each delay is uniform in `delay/2 ... delay`, so it never drops to zero.
  public static var equal: RetryJitter {
    .equal(random: systemRandom)
  }

  /// Equal jitter with an injected random source.
  ///
  /// - Parameter random: Returns a number in `0 ... 1` (values outside are clamped).
  public static func equal(random: @escaping @Sendable () -> Double) -> RetryJitter {
    RetryJitter(kind: .equal, random: random)
  }

  /// The delay to wait, given the backoff's `delay`.
  ///
  /// - Parameter delay: The delay before jitter.
  /// - Returns: `delay` itself for ``none``; otherwise a random delay within the bounds of
  ///   the kind of jitter, never longer than `delay`.
  public func apply(to delay: Duration) -> Duration {
    switch kind {
    case .none:
      return delay
    case .full:
      return delay * unit()
    case .equal:
      let half = delay / 2
      return half + (delay - half) * unit()
    }
  }

  private func unit() -> Double {
    let value = random()
    guard value.isFinite else { return 1 }
    return min(max(value, 0), 1)
  }

  public var description: String {
    switch kind {
    case .none: "none"
    case .full: "full"
    case .equal: "equal"
    }
  }
}
