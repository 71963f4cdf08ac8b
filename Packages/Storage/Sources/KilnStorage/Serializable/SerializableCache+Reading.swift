import Foundation
import _KilnSynchronization

extension SerializableCache {
  /// The value stored under `key`, or `nil`; assigning stores (and persists) a value with
  /// the default lifetime, assigning `nil` removes it.
  ///
  /// - Important: A value the codecs cannot encode is not stored and the key is removed;
  ///   the encoding error is reported by the next ``flush()``. Use
  ///   ``setValue(_:forKey:expiresAt:)`` to get the error at once.
  public subscript(key: Key) -> Value? {
    get { entry(forKey: key)?.value }
    set {
      if let newValue {
        do {
          try setValue(newValue, forKey: key, expiresAt: nil)
        } catch {
          removeValue(forKey: key)
          state.withLock { $0.failure = $0.failure ?? error }
        }
      } else {
        removeValue(forKey: key)
      }
    }
  }

  /// The value stored under `key`, or `nil` when there is none or it has expired.
  public func value(forKey key: Key) -> Value? {
    entry(forKey: key)?.value
  }

  /// The entry stored under `key`, or `nil` when there is none or it has expired (an
  /// expired entry is removed, and its removal persisted).
  ///
  /// - Parameter key: The key to look up.
  /// - Returns: The entry, or `nil`.
  public func entry(forKey key: Key) -> CacheEntry<Value>? {
    guard let node = state.withLock({ $0.table.get(key) }) else {
      counters.add(.misses)
      return nil
    }
    if node.expiresAt != .infinity, now().timeIntervalSinceReferenceDate > node.expiresAt {
      counters.add(.misses)
      counters.add(.expiredReads)
      let record = node.value.record
      let removed: LRUNode<Key, Stored>? = state.withLock { state in
        guard let removed = state.table.remove(key, if: { $0.value.record == record }) else { return nil }
        state.pending += Journal.removeRecord(key: Journal.key(ofSetRecord: record))
        return removed
      }
      if removed != nil { scheduleWrite() }
      return nil
    }
    counters.add(.hits)
    return CacheEntry(
      value: node.value.value, storedAt: Date(timeIntervalSinceReferenceDate: node.storedAt),
      expiresAt: node.expiresAt == .infinity ? nil : Date(timeIntervalSinceReferenceDate: node.expiresAt))
  }

  /// The number of entries (expired ones not yet removed included).
  public var count: Int {
    state.withLock { $0.table.count }
  }

  /// The keys, least recently used first.
  public var keys: [Key] {
    state.withLock { $0.table.keysOldestFirst }
  }
}
