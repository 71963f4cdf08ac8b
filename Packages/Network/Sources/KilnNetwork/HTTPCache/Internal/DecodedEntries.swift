import Foundation
import Synchronization
import _KilnSynchronization

/// The decoded form of the entries an ``HTTPCache`` read or wrote last, beside the bytes they
/// were decoded from: what makes a fresh hit a lookup rather than a decode.
///
/// An entry is used only while the store still holds the very bytes it was decoded from (the
/// same storage, or equal bytes), so the store stays the one source of truth: another process
/// writing a shared store, an entry that expired or was removed, or a corrupt value are all
/// seen as they would be without it.
///
/// Bounded in count, first in first out, and entries larger than ``largestEntry`` are not kept
/// (decoding them is cheap next to sending them, and keeping them would double their memory
/// with a store that does not share its bytes).
final class DecodedEntries: Sendable {
  /// The most entries kept.
  static let capacity = 512
  /// The largest entry kept, in bytes.
  static let largestEntry = 256 * 1024

  private struct Entry {
    var bytes: Data
    var variants: [StoredHTTPResponse]
  }

  private struct State {
    var entries: [String: Entry] = [:]
    /// The keys in the order they were added, as a ring of ``capacity`` slots.
    var order: [String] = []
    var next = 0
  }

  private let state = KilnMutex(State())
  private let reuses = Atomic<Int>(0)

  /// How many reads were answered without decoding, since the cache was created.
  var reuseCount: Int {
    reuses.load(ordering: .relaxed)
  }

  /// The variants decoded from `bytes`, when they are the bytes kept for `key`.
  func variants(forKey key: String, bytes: Data) -> [StoredHTTPResponse]? {
    guard let entry = state.withLock({ $0.entries[key] }), Self.same(entry.bytes, bytes) else { return nil }
    reuses.add(1, ordering: .relaxed)
    return entry.variants
  }

  /// Keeps `variants` as what `bytes`, stored under `key`, decode to.
  func remember(_ variants: [StoredHTTPResponse], decodedFrom bytes: Data, forKey key: String) {
    guard bytes.count <= Self.largestEntry else {
      forget(key)
      return
    }
    state.withLock { state in
      if state.entries.updateValue(Entry(bytes: bytes, variants: variants), forKey: key) != nil { return }
      if state.order.count < Self.capacity {
        state.order.append(key)
        return
      }
      let evicted = state.order[state.next]
      if evicted != key { state.entries[evicted] = nil }
      state.order[state.next] = key
      state.next = (state.next + 1) % Self.capacity
    }
  }

  /// Drops what is kept for `key`.
  func forget(_ key: String) {
    _ = state.withLock { $0.entries.removeValue(forKey: key) }
  }

  /// Drops everything.
  func forgetAll() {
    state.withLock { $0 = State() }
  }

  /// The number of entries kept now.
  var count: Int {
    state.withLock { $0.entries.count }
  }

  /// Whether `a` and `b` hold the same bytes: at once when they share their storage (a store
  /// in memory hands back what it was given), else by comparing them.
  private static func same(_ a: Data, _ b: Data) -> Bool {
    guard a.count == b.count else { return false }
    return a.withUnsafeBytes { a in
      b.withUnsafeBytes { b in
        a.baseAddress == b.baseAddress || a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0
      }
    }
  }
}
