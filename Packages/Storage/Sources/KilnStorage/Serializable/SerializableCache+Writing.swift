public import Foundation
import _KilnSynchronization

extension SerializableCache {
  /// Stores `value` under `key` and queues the change for the journal.
  ///
  /// - Parameters:
  ///   - value: The value to store.
  ///   - key: Its key.
  ///   - expiresAt: When it expires; `nil` applies ``entryLifetime``.
  /// - Throws: ``SerializableCacheError/keyEncodingFailed(_:)`` or
  ///   ``SerializableCacheError/valueEncodingFailed(_:)``; the cache is unchanged then.
  public func setValue(_ value: Value, forKey key: Key, expiresAt: Date?) throws(SerializableCacheError) {
    let keyBytes: Data
    let valueBytes: Data
    do { keyBytes = try keyCodec.encode(key) } catch { throw .keyEncodingFailed(error) }
    do { valueBytes = try valueCodec.encode(value) } catch { throw .valueEncodingFailed(error) }
    let stamp = now()
    let expiry = EntryLifetime.expiry(expiresAt, storedAt: stamp, lifetime: entryLifetime)
    let storedAt = stamp.timeIntervalSinceReferenceDate
    let expires = expiry?.timeIntervalSinceReferenceDate ?? .infinity
    let record = Journal.setRecord(key: [UInt8](keyBytes), value: valueBytes, storedAt: storedAt, expiresAt: expires)
    let discards: LRUDiscards<Key, Stored>? = state.withLock { state in
      guard state.table.canHold(cost: 0) else { return nil }
      let discards = state.table.insert(
        Stored(value: value, record: record), forKey: key, cost: record.count, storedAt: storedAt, expiresAt: expires)
      state.pending += record
      for evicted in discards.evicted {
        state.pending += Journal.removeRecord(key: Journal.key(ofSetRecord: evicted.value.record))
      }
      return discards
    }
    guard let discards else { return }
    counters.add(.writes)
    counters.add(.writtenBytes, record.count)
    if !discards.evicted.isEmpty { counters.add(.evictions, discards.evicted.count) }
    withExtendedLifetime(discards) {}
    scheduleWrite()
  }

  /// Removes the value stored under `key`, if any, and queues the removal for the journal.
  public func removeValue(forKey key: Key) {
    let removed = state.withLock { state in
      let removed = state.table.remove(key)
      if let removed {
        state.pending += Journal.removeRecord(key: Journal.key(ofSetRecord: removed.value.record))
      }
      return removed
    }
    counters.add(.removals)
    if removed != nil { scheduleWrite() }
  }

  /// Removes every entry and queues the removal for the journal.
  public func removeAll() {
    let removed = state.withLock { state in
      state.pending += Journal.removeAllRecord()
      return state.table.removeAll()
    }
    withExtendedLifetime(removed) {}
    scheduleWrite()
  }

  /// Removes every expired entry now (O(n)) and queues the removals for the journal.
  ///
  /// - Returns: The number of entries removed.
  @discardableResult
  public func removeExpired() -> Int {
    let instant = now().timeIntervalSinceReferenceDate
    let removed = state.withLock { state in
      let removed = state.table.removeExpired(at: instant)
      for node in removed {
        state.pending += Journal.removeRecord(key: Journal.key(ofSetRecord: node.value.record))
      }
      return removed
    }
    if !removed.isEmpty {
      counters.add(.expirations, removed.count)
      scheduleWrite()
    }
    return removed.count
  }
}
