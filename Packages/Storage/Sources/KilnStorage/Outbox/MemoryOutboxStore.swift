public import Foundation
import _KilnSynchronization

/// An ``OutboxStore`` in memory, for tests and previews: everything in it is lost with the
/// process, so it is **not** an outbox for an app. Use ``SQLiteOutboxStore``.
///
/// It keeps the promises of the protocol that do not concern the disk: sequence numbers
/// grow and are never reused, a write that throws changes nothing, appending the same record
/// twice returns its entry, and a record whose channel is invalid or whose key is taken by
/// another record is refused.
public actor MemoryOutboxStore: OutboxStore {
  private var entries: [OutboxEntry] = []
  private var quarantine: [OutboxQuarantined] = []
  private var lastSequence: UInt64 = 0
  private var isClosed = false
  private let now: @Sendable () -> Date
  private nonisolated let senderLocked = KilnMutex(false)

  /// An empty store.
  ///
  /// - Parameter now: The wall clock that dates quarantines.
  public init(now: @escaping @Sendable () -> Date = Date.init) {
    self.now = now
  }

  public func append(_ record: OutboxRecord) throws(OutboxStoreError) -> UInt64 {
    try check(record)
    if let existing = entries.first(where: { $0.record.idempotencyKey == record.idempotencyKey }) {
      guard existing.record == record else { throw .keyConflict(record.idempotencyKey) }
      return existing.sequence
    }
    lastSequence += 1
    entries.append(OutboxEntry(sequence: lastSequence, record: record))
    return lastSequence
  }

  public func replace(_ sequence: UInt64, with record: OutboxRecord) throws(OutboxStoreError) {
    try check(record)
    guard let index = entries.firstIndex(where: { $0.sequence == sequence }) else {
      throw .notFound(sequence: sequence)
    }
    if entries.contains(where: { $0.sequence != sequence && $0.record.idempotencyKey == record.idempotencyKey }) {
      throw .keyConflict(record.idempotencyKey)
    }
    entries[index] = OutboxEntry(sequence: sequence, record: record)
  }

  public func remove(_ sequences: [UInt64]) throws(OutboxStoreError) {
    guard !isClosed else { throw .closed }
    let removed = Set(sequences)
    entries.removeAll { removed.contains($0.sequence) }
  }

  public func recordFailure(_ sequence: UInt64, attempts: Int, error: String) throws(OutboxStoreError) {
    guard !isClosed else { throw .closed }
    guard let index = entries.firstIndex(where: { $0.sequence == sequence }) else {
      throw .notFound(sequence: sequence)
    }
    let entry = entries[index]
    entries[index] = OutboxEntry(sequence: sequence, record: entry.record, attempts: attempts, lastError: error)
  }

  public func loadAll() throws(OutboxStoreError) -> [OutboxLoad] {
    guard !isClosed else { throw .closed }
    return entries.map(OutboxLoad.entry)
  }

  public func quarantine(_ sequence: UInt64, reason: String) throws(OutboxStoreError) {
    guard !isClosed else { throw .closed }
    guard let index = entries.firstIndex(where: { $0.sequence == sequence }) else {
      throw .notFound(sequence: sequence)
    }
    let entry = entries.remove(at: index)
    quarantine.append(
      OutboxQuarantined(
        sequence: sequence, channel: entry.record.channel, param: entry.record.param,
        storedBytes: (try? OutboxEnvelope.encode(entry.record)) ?? Data(), reason: reason, quarantinedAt: now()))
  }

  public func quarantined() throws(OutboxStoreError) -> [OutboxQuarantined] {
    guard !isClosed else { throw .closed }
    return quarantine
  }

  /// Closes the store; every later call throws ``OutboxStoreError/closed``.
  public func close() {
    isClosed = true
  }

  private func check(_ record: OutboxRecord) throws(OutboxStoreError) {
    guard !isClosed else { throw .closed }
    guard OutboxEnvelope.isValid(channel: record.channel) else { throw .invalidChannel(record.channel) }
  }
}

extension MemoryOutboxStore: SenderLockingOutboxStore {
  /// Takes the sender lock of this instance: one sender per store, as for the durable stores.
  public nonisolated func lockSender() async throws(OutboxStoreError) -> OutboxSenderLock {
    let acquired = senderLocked.withLock { locked in
      defer { locked = true }
      return !locked
    }
    guard acquired else { return .held(by: "another outbox of this MemoryOutboxStore") }
    return .acquired(OutboxSenderLease { self.senderLocked.withLock { $0 = false } })
  }
}
