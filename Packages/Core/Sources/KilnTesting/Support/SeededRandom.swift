import Foundation
import _KilnSynchronization

/// A seedable random number generator (SplitMix64) for tests whose random choices must be
/// replayable.
///
/// Seed it with ``TestSeed/current``: every stress test of a run then uses the seed the run
/// printed, and setting `KILN_TEST_SEED` replays it.
///
/// ```swift
/// var random = SeededRandomNumberGenerator(seed: TestSeed.current)
/// let size = Int.random(in: 1...8, using: &random)
/// #expect(invariantHolds, TestSeed.comment)   // a failure names the seed
/// ```
public struct SeededRandomNumberGenerator: RandomNumberGenerator, Sendable {
  private var state: UInt64

  /// Creates a generator; the same seed always gives the same numbers.
  ///
  /// - Parameter seed: The starting state.
  public init(seed: UInt64) {
    state = seed
  }

  /// The next 64 random bits.
  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

/// A ``SeededRandomNumberGenerator`` that `@Sendable` closures can share: each call takes the
/// next number under a lock. The order in which concurrent callers take numbers varies, the
/// numbers themselves come from the seed.
public final class SharedRandom: Sendable {
  private let generator: KilnMutex<SeededRandomNumberGenerator>

  /// Creates a shared generator.
  ///
  /// - Parameter seed: The starting state; ``TestSeed/current`` by default.
  public init(seed: UInt64 = TestSeed.current) {
    generator = KilnMutex(SeededRandomNumberGenerator(seed: seed))
  }

  /// A random integer in `range`.
  public func int(in range: ClosedRange<Int>) -> Int {
    generator.withLock { Int.random(in: range, using: &$0) }
  }

  /// A random integer in `range`.
  public func int(in range: Range<Int>) -> Int {
    generator.withLock { Int.random(in: range, using: &$0) }
  }

  /// A random Boolean.
  public func bool() -> Bool {
    generator.withLock { Bool.random(using: &$0) }
  }
}

/// The seed of this test run's random choices.
///
/// Read from the environment variable `KILN_TEST_SEED` when it is set (to replay a run),
/// otherwise chosen at random once per process. Either way it is printed once, the first time
/// a test asks for it, and ``comment`` puts it in a failing expectation's message.
public enum TestSeed {
  /// The seed: `KILN_TEST_SEED`, or a random one chosen once per process.
  public static var current: UInt64 { seed }

  /// "replay with KILN_TEST_SEED=…", for an expectation's comment.
  public static var comment: String { "replay with KILN_TEST_SEED=\(seed)" }

  private static let seed: UInt64 = {
    let seed: UInt64
    if let text = ProcessInfo.processInfo.environment["KILN_TEST_SEED"], let value = UInt64(text) {
      seed = value
    } else {
      seed = UInt64.random(in: 0...UInt64.max)
    }
    print("KilnTesting: random choices seeded with KILN_TEST_SEED=\(seed)")
    return seed
  }()
}
