import Dispatch
import _KilnSynchronization

/// Recency of reads, recorded without a hop to the index actor: each read moves its entry
/// to the newest end of the log, and the index drains the log, oldest first, before it
/// decides what to evict.
///
/// The log holds each entry once, at its latest read, so it is bounded by the number of
/// distinct entries read between two writes, and at most `capacity` of them: past that the
/// entry read least recently is forgotten (it keeps its older place in the index). The
/// latest reads are never the ones dropped, however many reads a busy period makes.
final class AccessLog: Sendable {
  static var defaultCapacity: Int { 1 << 16 }
  private let capacity: Int
  private let pending: KilnMutex<LRUTable<KeyDigest, Void>>

  init(capacity: Int) {
    precondition(capacity > 0, "AccessLog capacity must be positive")
    self.capacity = capacity
    pending = KilnMutex(LRUTable(countLimit: capacity))
  }

  func record(_ digest: KeyDigest) {
    pending.withLock { pending in
      _ = pending.insert((), forKey: digest, cost: 0, storedAt: 0, expiresAt: .infinity)
    }
  }

  /// The entries read since the last drain, least recently read first.
  func drain() -> [KeyDigest] {
    let capacity = capacity
    let drained = pending.withLock { pending in
      var drained = LRUTable<KeyDigest, Void>(countLimit: capacity)
      swap(&drained, &pending)
      return drained
    }
    return drained.keysOldestFirst
  }
}
