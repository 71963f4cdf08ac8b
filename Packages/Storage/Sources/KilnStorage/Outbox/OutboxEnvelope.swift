import Foundation

/// The bytes an outbox store keeps for one record, checksummed: a flipped byte on disk is
/// found on load instead of sending a different write.
///
/// Layout (integers little-endian):
///
///     "KOB1" | version: u8 = 1 | idempotency key: 16 bytes | enqueued at: f64 (seconds since 2001)
///     | channel: u32 length + UTF-8 | scope: u32 length + bytes | param: u32 length + bytes
///     | change: u32 length + bytes | CRC-32 (IEEE) of every byte before: u32
///
/// SQLite checksums nothing inside its pages, and PostgreSQL's page checksums are off by
/// default, so the store checks its own bytes.
enum OutboxEnvelope {
  static let magic: [UInt8] = Array("KOB1".utf8)
  static let version: UInt8 = 1
  /// Magic, version, key, date, four lengths and the checksum.
  static let overhead = 4 + 1 + 16 + 8 + 4 * 4 + 4

  /// The largest channel name, in bytes of UTF-8.
  static let maximumChannelLength = 255

  /// Whether `channel` can name a channel: 1 to 255 bytes of UTF-8, without NUL (which a
  /// PostgreSQL `text` cannot hold).
  static func isValid(channel: String) -> Bool {
    (1...maximumChannelLength).contains(channel.utf8.count) && !channel.utf8.contains(0)
  }

  /// The envelope of `record`.
  ///
  /// - Throws: ``OutboxStoreError/invalidChannel(_:)``, or
  ///   ``OutboxStoreError/recordTooLarge(size:limit:)`` when a part does not fit a 32-bit length.
  static func encode(_ record: OutboxRecord) throws(OutboxStoreError) -> Data {
    guard isValid(channel: record.channel) else { throw .invalidChannel(record.channel) }
    let channel = Array(record.channel.utf8)
    let size = overhead + channel.count + record.scope.count + record.param.count + record.change.count
    let limit = Int(UInt32.max)
    for part in [record.scope.count, record.param.count, record.change.count] where part > limit {
      throw .recordTooLarge(size: size, limit: limit)
    }
    var writer = ByteWriter(capacity: size)
    writer.append(contentsOf: magic)
    writer.append(version)
    writer.append(contentsOf: record.idempotencyKey.bytes)
    writer.append(record.enqueuedAt.timeIntervalSinceReferenceDate)
    for part in [Data(channel), record.scope, record.param, record.change] {
      writer.append(UInt32(part.count))
      writer.append(contentsOf: part)
    }
    let checksum = CRC32.checksum(writer.bytes)
    writer.append(checksum)
    return Data(writer.bytes)
  }

  /// The record in `bytes`, or why it cannot be trusted.
  static func decode(_ bytes: Data) -> Result<OutboxRecord, Damage> {
    bytes.withUnsafeBytes { buffer -> Result<OutboxRecord, Damage> in
      guard buffer.count >= overhead else { return .failure(.truncated(buffer.count)) }
      let body = UnsafeRawBufferPointer(rebasing: buffer[..<(buffer.count - 4)])
      var trailer = ByteReader(buffer, offset: buffer.count - 4)
      guard let stored = trailer.readUInt32(), CRC32.checksum(body) == stored else {
        return .failure(.checksumMismatch)
      }
      var reader = ByteReader(body)
      guard let head = reader.readBytes(4), head.elementsEqual(magic) else { return .failure(.notAnEnvelope) }
      guard reader.readUInt8() == version else { return .failure(.unknownVersion) }
      guard let keyBytes = reader.readBytes(16), let key = IdempotencyKey(bytes: keyBytes),
        let enqueuedAt = reader.readDouble(), enqueuedAt.isFinite
      else { return .failure(.malformed) }
      var parts: [Data] = []
      for _ in 0..<4 {
        guard let length = reader.readUInt32(), let part = reader.readBytes(Int(length)) else {
          return .failure(.malformed)
        }
        parts.append(Data(part))
      }
      guard reader.remaining == 0, let channel = String(validating: parts[0], as: UTF8.self),
        isValid(channel: channel)
      else { return .failure(.malformed) }
      return .success(
        OutboxRecord(
          channel: channel, scope: parts[1], param: parts[2], change: parts[3], idempotencyKey: key,
          enqueuedAt: Date(timeIntervalSinceReferenceDate: enqueuedAt)))
    }
  }

  /// An entry as a store read it: its envelope checked, and checked against the columns
  /// stored beside it (a store keeps channel, scope and param apart to select and report on).
  static func load(
    sequence: UInt64, channel: String?, scope: Data, param: Data, record: Data, attempts: Int, lastError: String?
  ) -> OutboxLoad {
    switch decode(record) {
    case .success(let decoded) where decoded.channel == channel && decoded.scope == scope && decoded.param == param:
      return .entry(OutboxEntry(sequence: sequence, record: decoded, attempts: attempts, lastError: lastError))
    case .success:
      return .damaged(
        OutboxDamage(sequence: sequence, channel: channel, param: param, reason: Damage.columnsDisagree.description))
    case .failure(let damage):
      return .damaged(OutboxDamage(sequence: sequence, channel: channel, param: param, reason: damage.description))
    }
  }

  /// Why stored bytes are not a trustworthy record.
  enum Damage: Error, Equatable, CustomStringConvertible {
    case truncated(Int)
    case checksumMismatch
    case notAnEnvelope
    case unknownVersion
    case malformed
    /// The record is intact but disagrees with the columns stored beside it.
    case columnsDisagree

    var description: String {
      switch self {
      case .truncated(let count): "the record is truncated (\(count) bytes)"
      case .checksumMismatch: "the record's checksum does not match its bytes"
      case .notAnEnvelope: "the record is not an outbox record"
      case .unknownVersion: "the record has an unknown format version"
      case .malformed: "the record's lengths or fields are malformed"
      case .columnsDisagree: "the record disagrees with the channel, scope or param stored beside it"
      }
    }
  }
}
