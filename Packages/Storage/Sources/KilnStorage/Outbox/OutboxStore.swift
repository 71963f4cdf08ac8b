public import Foundation

/// Durable storage for writes waiting to be sent: an ordered log of ``OutboxRecord``s that
/// survives the process being killed.
///
/// An outbox store keeps the user's changes from the moment they are made until the server
/// has confirmed them. Each appended record gets a ``OutboxEntry/sequence`` number, greater
/// than every earlier one's and never reused, so that the writes of one scope are sent in
/// the order they were made:
///
/// ```swift
/// let outbox = try SQLiteOutboxStore(url: support.appending(path: "outbox.sqlite"))
/// let sequence = try await outbox.append(
///   OutboxRecord(channel: "notes", scope: Data("note/7".utf8), param: paramBytes, change: changeBytes))
/// // … sent and confirmed:
/// try await outbox.remove([sequence])
/// ```
///
/// A store promises that:
/// - a call that returned is durable (as its ``Durability`` says) and one that threw wrote
///   nothing (for `PostgresOutboxStore`, except an error whose outcome is unknown: see its
///   documentation);
/// - ``loadAll()`` returns every entry in sequence order, and reports a record whose bytes
///   were damaged on disk as ``OutboxLoad/damaged(_:)`` instead of returning wrong bytes or
///   failing the whole load; ``quarantine(_:reason:)`` then moves it aside;
/// - appending a record whose idempotency key is already stored, with the same content,
///   returns the stored entry's sequence, so a caller that does not know whether its append
///   committed (a timeout) may append again without making a second write.
///
/// ``SQLiteOutboxStore`` is durable and the default; `PostgresOutboxStore` (the `PostgreSQL`
/// trait) keeps a server's entries in its database; ``MemoryOutboxStore`` is for tests.
public protocol OutboxStore: Sendable {
  /// Appends `record` in one atomic, durable write.
  ///
  /// - Returns: The new entry's sequence number: greater than every earlier one's, never
  ///   reused. When the store already holds a record with the same idempotency key and the
  ///   same content, nothing is written and its sequence is returned.
  /// - Throws: ``OutboxStoreError/storageFull``, ``OutboxStoreError/recordTooLarge(size:limit:)``,
  ///   ``OutboxStoreError/keyConflict(_:)``, ``OutboxStoreError/closed`` or
  ///   ``OutboxStoreError/failed(_:)``; nothing is written when it throws.
  func append(_ record: OutboxRecord) async throws(OutboxStoreError) -> UInt64

  /// Replaces the record of entry `sequence` in one atomic write, keeping its position;
  /// its attempts and last error start again.
  ///
  /// - Throws: ``OutboxStoreError/notFound(sequence:)`` when no entry has that sequence (it
  ///   was removed or quarantined), or another ``OutboxStoreError``.
  func replace(_ sequence: UInt64, with record: OutboxRecord) async throws(OutboxStoreError)

  /// Removes the entries of `sequences` in one atomic write; sequences of no entry are
  /// ignored.
  func remove(_ sequences: [UInt64]) async throws(OutboxStoreError)

  /// Records that sending entry `sequence` failed: its number of attempts so far and the
  /// error, as ``OutboxEntry/attempts`` and ``OutboxEntry/lastError`` tell after a restart.
  ///
  /// - Throws: ``OutboxStoreError/notFound(sequence:)`` when no entry has that sequence.
  func recordFailure(_ sequence: UInt64, attempts: Int, error: String) async throws(OutboxStoreError)

  /// Every entry, in sequence order, with damaged ones reported in their place.
  func loadAll() async throws(OutboxStoreError) -> [OutboxLoad]

  /// Moves entry `sequence` out of the log into the store's quarantine, with `reason`: it is
  /// no longer loaded, and can still be read with ``quarantined()``.
  ///
  /// - Throws: ``OutboxStoreError/notFound(sequence:)`` when no entry has that sequence.
  func quarantine(_ sequence: UInt64, reason: String) async throws(OutboxStoreError)

  /// The entries moved to quarantine, oldest first.
  func quarantined() async throws(OutboxStoreError) -> [OutboxQuarantined]
}

/// One write waiting to be sent: what it changes and how to send it, as bytes its owner
/// encoded.
public struct OutboxRecord: Hashable, Sendable {
  /// The name of the owner that encodes, applies and sends this record (one per repository);
  /// 1 to 255 bytes of UTF-8, without NUL.
  public var channel: String

  /// What orders this record: records of one channel and scope are sent one at a time, in
  /// sequence order. Usually the encoded param.
  public var scope: Data

  /// The encoded param (the key of the content the change applies to).
  public var param: Data

  /// The encoded change.
  public var change: Data

  /// The key sent with every attempt, so that the server applies the write once.
  public var idempotencyKey: IdempotencyKey

  /// When the user made the change.
  public var enqueuedAt: Date

  /// Creates a record.
  ///
  /// - Parameters:
  ///   - channel: The owner's name; 1 to 255 bytes of UTF-8, without NUL.
  ///   - scope: What orders the record among others of its channel.
  ///   - param: The encoded param.
  ///   - change: The encoded change.
  ///   - idempotencyKey: The key sent with every attempt; a new random one by default.
  ///   - enqueuedAt: When the change was made; now by default.
  public init(
    channel: String,
    scope: Data,
    param: Data,
    change: Data,
    idempotencyKey: IdempotencyKey = IdempotencyKey(),
    enqueuedAt: Date = Date()
  ) {
    self.channel = channel
    self.scope = scope
    self.param = param
    self.change = change
    self.idempotencyKey = idempotencyKey
    self.enqueuedAt = enqueuedAt
  }
}

/// An ``OutboxRecord`` in a store: its position and how sending it went so far.
public struct OutboxEntry: Hashable, Sendable {
  /// The entry's position: greater than every earlier entry's, never reused.
  public let sequence: UInt64

  /// The write.
  public let record: OutboxRecord

  /// The attempts that failed so far, as last recorded.
  public let attempts: Int

  /// The error of the last failed attempt, as last recorded.
  public let lastError: String?

  /// Creates an entry (for a store of your own).
  public init(sequence: UInt64, record: OutboxRecord, attempts: Int = 0, lastError: String? = nil) {
    self.sequence = sequence
    self.record = record
    self.attempts = attempts
    self.lastError = lastError
  }
}

/// One entry read back by ``OutboxStore/loadAll()``.
public enum OutboxLoad: Hashable, Sendable {
  /// An intact entry.
  case entry(OutboxEntry)

  /// An entry whose stored bytes are damaged: its record cannot be trusted, so it must not
  /// be sent. Quarantine it with ``OutboxStore/quarantine(_:reason:)``.
  case damaged(OutboxDamage)

  /// The sequence number of the entry.
  public var sequence: UInt64 {
    switch self {
    case .entry(let entry): entry.sequence
    case .damaged(let damage): damage.sequence
    }
  }
}

/// What is known of a damaged entry: what the store kept beside its record, which may be
/// enough to refetch what it changed.
public struct OutboxDamage: Hashable, Sendable {
  /// The entry's sequence number.
  public let sequence: UInt64

  /// The channel stored beside the record, when it is readable.
  public let channel: String?

  /// The encoded param stored beside the record, when it is readable.
  public let param: Data?

  /// What is wrong, for logs.
  public let reason: String

  /// Creates the description of a damaged entry (for a store of your own).
  public init(sequence: UInt64, channel: String?, param: Data?, reason: String) {
    self.sequence = sequence
    self.channel = channel
    self.param = param
    self.reason = reason
  }
}

/// An entry moved out of the log by ``OutboxStore/quarantine(_:reason:)``.
public struct OutboxQuarantined: Hashable, Sendable {
  /// The sequence number the entry had.
  public let sequence: UInt64

  /// Its channel, when readable.
  public let channel: String?

  /// Its encoded param, when readable.
  public let param: Data?

  /// Its stored record's bytes as they were, damaged or not.
  public let storedBytes: Data

  /// Why it was quarantined.
  public let reason: String

  /// When it was quarantined.
  public let quarantinedAt: Date

  /// Creates the description of a quarantined entry (for a store of your own).
  public init(
    sequence: UInt64, channel: String?, param: Data?, storedBytes: Data, reason: String, quarantinedAt: Date
  ) {
    self.sequence = sequence
    self.channel = channel
    self.param = param
    self.storedBytes = storedBytes
    self.reason = reason
    self.quarantinedAt = quarantinedAt
  }
}

/// Why an ``OutboxStore`` call failed. Nothing was written when a call throws.
public enum OutboxStoreError: Error, Sendable, CustomStringConvertible {
  /// The disk (or the store's size limit) is full.
  case storageFull

  /// The record, encoded, is larger than the store accepts.
  case recordTooLarge(size: Int, limit: Int)

  /// A record's channel is empty, longer than 255 bytes of UTF-8, or holds a NUL.
  case invalidChannel(String)

  /// No entry has this sequence number: it was removed or quarantined.
  case notFound(sequence: UInt64)

  /// A record with this idempotency key, but other content, is already stored. A changed
  /// write needs a new key.
  case keyConflict(IdempotencyKey)

  /// The store was closed.
  case closed

  /// The store itself failed (for ``SQLiteOutboxStore``, a ``SQLiteStoreError``; for
  /// `PostgresOutboxStore`, a `PostgresStoreError`).
  case failed(any Error)

  public var description: String {
    switch self {
    case .storageFull: "Outbox: the storage is full; nothing was written"
    case .recordTooLarge(let size, let limit): "Outbox: a record of \(size) bytes exceeds the limit of \(limit)"
    case .invalidChannel(let channel): "Outbox: \(String(reflecting: channel)) is not a valid channel name"
    case .notFound(let sequence): "Outbox: no entry \(sequence)"
    case .keyConflict(let key): "Outbox: idempotency key \(key) is already stored with another write"
    case .closed: "Outbox: the store is closed"
    case .failed(let error): "Outbox: \(error)"
    }
  }
}
