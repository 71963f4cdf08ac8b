import Synchronization

/// Tells a slow read whether a write to its key began after it or was still running: the
/// read may then hold a value older than the one now stored (``TieredCache`` must not
/// promote it).
///
/// Keys are spread over a fixed number of stripes, each one atomic word: the number of
/// writes begun (high 32 bits) and the number still running (low 32 bits). A read takes a
/// snapshot before it starts, valid only when no write is running; the snapshot still
/// matches later only if no write to a key of that stripe has begun since. Writes to other
/// keys of the same stripe cost a read its promotion, never its correctness.
final class WriteEpochs: Sendable {
  private final class Stripe: Sendable {
    let word = Atomic<UInt64>(0)
  }

  private static var stripeCount: Int { 64 }
  private static var oneWrite: UInt64 { 1 << 32 | 1 }

  private let stripes: [Stripe] = (0..<WriteEpochs.stripeCount).map { _ in Stripe() }

  private func stripe(_ key: some Hashable) -> Stripe {
    stripes[key.hashValue & (Self.stripeCount - 1)]
  }

  /// A snapshot for a read of `key`, or `nil` while a write to its stripe is running.
  func snapshot(_ key: some Hashable) -> UInt64? {
    let word = stripe(key).word.load(ordering: .acquiring)
    return word & 0xFFFF_FFFF == 0 ? word : nil
  }

  /// Whether no write to `key`'s stripe has begun since `snapshot` was taken.
  func isUnchanged(_ key: some Hashable, since snapshot: UInt64) -> Bool {
    stripe(key).word.load(ordering: .acquiring) == snapshot
  }

  /// Marks a write of `key` as begun; call ``end(_:)`` when it is over, whatever happens.
  func begin(_ key: some Hashable) {
    stripe(key).word.wrappingAdd(Self.oneWrite, ordering: .acquiringAndReleasing)
  }

  /// Marks a write of `key` begun with ``begin(_:)`` as over.
  func end(_ key: some Hashable) {
    stripe(key).word.wrappingSubtract(1, ordering: .acquiringAndReleasing)
  }

  /// Marks a write of every key as begun (``endAll()`` when it is over).
  func beginAll() {
    for stripe in stripes { stripe.word.wrappingAdd(Self.oneWrite, ordering: .acquiringAndReleasing) }
  }

  /// Marks a write begun with ``beginAll()`` as over.
  func endAll() {
    for stripe in stripes { stripe.word.wrappingSubtract(1, ordering: .acquiringAndReleasing) }
  }
}
