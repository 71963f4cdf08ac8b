// The append-only journal behind SerializableCache.
//
// File: an 8-byte header ("KLNJ", version 1, three zero bytes), then records:
//
//   u32 payload length | u32 CRC-32 of the payload | payload
//   payload: u8 operation, then
//     set (1):       u32 key length, key bytes, f64 storedAt, f64 expiresAt, value bytes
//     remove (2):    u32 key length, key bytes
//     removeAll (3): nothing
//
// A record is appended with one write(2); a crash in the middle leaves a torn tail, which
// the next load detects (length past the end, or a checksum mismatch) and truncates. The
// file is rewritten ("compacted") to a snapshot of the live entries through a temporary
// file and a rename once it grows past twice the live data, so each change costs O(1)
// amortised and the file stays proportional to what it holds.

import Foundation

enum Journal {
  static let header: [UInt8] = Array("KLNJ".utf8) + [1, 0, 0, 0]
  static let recordOverhead = 8

  enum Operation: UInt8 {
    case set = 1
    case remove = 2
    case removeAll = 3
  }

  /// Offset of the key bytes inside a set or remove record.
  static let keyOffset = recordOverhead + 1 + 4

  static func setRecord(key: [UInt8], value: Data, storedAt: Double, expiresAt: Double) -> [UInt8] {
    var writer = ByteWriter(capacity: keyOffset + key.count + 16 + value.count)
    writer.append(UInt32(0))
    writer.append(UInt32(0))
    writer.append(Operation.set.rawValue)
    writer.append(UInt32(key.count))
    writer.append(contentsOf: key)
    writer.append(storedAt)
    writer.append(expiresAt)
    writer.append(contentsOf: value)
    return seal(writer)
  }

  static func removeRecord(key: some Collection<UInt8>) -> [UInt8] {
    var writer = ByteWriter(capacity: keyOffset + key.count)
    writer.append(UInt32(0))
    writer.append(UInt32(0))
    writer.append(Operation.remove.rawValue)
    writer.append(UInt32(key.count))
    writer.append(contentsOf: key)
    return seal(writer)
  }

  static func removeAllRecord() -> [UInt8] {
    var writer = ByteWriter(capacity: recordOverhead + 1)
    writer.append(UInt32(0))
    writer.append(UInt32(0))
    writer.append(Operation.removeAll.rawValue)
    return seal(writer)
  }

  /// The key bytes of a set record made by ``setRecord(key:value:storedAt:expiresAt:)``.
  static func key(ofSetRecord record: [UInt8]) -> ArraySlice<UInt8> {
    let length = record.withUnsafeBytes {
      Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: recordOverhead + 1, as: UInt32.self)))
    }
    return record[keyOffset..<keyOffset + length]
  }

  private static func seal(_ writer: ByteWriter) -> [UInt8] {
    var writer = writer
    let payloadLength = writer.count - recordOverhead
    let checksum = writer.bytes.withUnsafeBytes {
      CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[recordOverhead...]))
    }
    writer.set(UInt32(payloadLength), at: 0)
    writer.set(checksum, at: 4)
    return writer.bytes
  }

  /// One decoded record; byte ranges index the journal's bytes.
  enum Record {
    case set(key: Range<Int>, storedAt: Double, expiresAt: Double, value: Range<Int>, record: Range<Int>)
    case remove(key: Range<Int>)
    case removeAll
  }

  /// Decodes the records of a journal file.
  ///
  /// - Returns: `nil` when the header is not a journal's; otherwise the intact records and
  ///   the offset where they end (the file is torn after it when smaller than its size).
  static func decode(_ bytes: [UInt8]) -> (records: [Record], validLength: Int)? {
    guard bytes.count >= header.count, bytes[..<header.count].elementsEqual(header) else { return nil }
    return bytes.withUnsafeBytes { buffer in
      var records: [Record] = []
      var offset = header.count
      while buffer.count - offset >= recordOverhead {
        let length = Int(UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
        let checksum = UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self))
        let start = offset + recordOverhead
        guard length >= 1, length <= buffer.count - start else { break }
        let payload = UnsafeRawBufferPointer(rebasing: buffer[start..<start + length])
        guard CRC32.checksum(payload) == checksum, let record = parse(payload, base: start, recordStart: offset)
        else { break }
        records.append(record)
        offset = start + length
      }
      return (records, offset)
    }
  }

  private static func parse(_ payload: UnsafeRawBufferPointer, base: Int, recordStart: Int) -> Record? {
    var reader = ByteReader(payload)
    guard let code = reader.readUInt8(), let operation = Operation(rawValue: code) else { return nil }
    switch operation {
    case .removeAll:
      return reader.remaining == 0 ? .removeAll : nil
    case .remove, .set:
      guard let keyLength = reader.readUInt32(), reader.readBytes(Int(keyLength)) != nil else { return nil }
      let key = base + 5..<base + 5 + Int(keyLength)
      if operation == .remove { return reader.remaining == 0 ? .remove(key: key) : nil }
      guard let storedAt = reader.readDouble(), let expiresAt = reader.readDouble(), !storedAt.isNaN, !expiresAt.isNaN
      else { return nil }
      return .set(
        key: key, storedAt: storedAt, expiresAt: expiresAt, value: base + reader.offset..<base + payload.count,
        record: recordStart..<base + payload.count)
    }
  }
}
