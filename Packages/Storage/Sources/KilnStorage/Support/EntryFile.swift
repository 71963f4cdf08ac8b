// The format of one DiskCache entry file (version 1), all integers little-endian:
//
//   0  "KLNC"             magic
//   4  u8 version = 1, u8 flags = 0, u16 reserved = 0
//   8  u32 key length     k
//  12  u64 value length   v
//  20  f64 storedAt       seconds since the reference date
//  28  f64 expiresAt      seconds since the reference date; +infinity for never
//  36  key bytes, then value bytes
//  36+k+v  u32 CRC-32 of every byte before it
//
// The file's size must be exactly 40 + k + v. A file of any other shape — truncated,
// corrupt, foreign, from a future version — is rejected.

enum EntryFile {
  static let magic: [UInt8] = Array("KLNC".utf8)
  static let version: UInt8 = 1
  static let headerSize = 36
  static let overhead = headerSize + 4

  /// Encodes one entry.
  static func encode(key: [UInt8], value: [UInt8], storedAt: Double, expiresAt: Double) -> [UInt8] {
    var writer = ByteWriter(capacity: overhead + key.count + value.count)
    writer.append(contentsOf: magic)
    writer.append(version)
    writer.append(UInt8(0))
    writer.append(UInt8(0))
    writer.append(UInt8(0))
    writer.append(UInt32(key.count))
    writer.append(UInt64(value.count))
    writer.append(storedAt)
    writer.append(expiresAt)
    writer.append(contentsOf: key)
    writer.append(contentsOf: value)
    let checksum = writer.bytes.withUnsafeBytes { CRC32.checksum($0) }
    writer.append(checksum)
    return writer.bytes
  }

  enum Decoded {
    /// Not a valid entry file: delete it.
    case corrupt
    /// A valid entry of another key (a hash collision): leave it alone.
    case otherKey
    /// The entry; `value` indexes the file's bytes.
    case entry(storedAt: Double, expiresAt: Double, value: Range<Int>)
  }

  /// Decodes a file's bytes, checking its shape, checksum and key.
  static func decode(_ bytes: [UInt8], expectedKey: [UInt8]) -> Decoded {
    bytes.withUnsafeBytes { buffer in
      guard let header = header(buffer) else { return .corrupt }
      let keyRange = headerSize..<headerSize + header.keyLength
      let stored = UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: buffer.count - 4, as: UInt32.self))
      guard CRC32.checksum(UnsafeRawBufferPointer(rebasing: buffer[..<(buffer.count - 4)])) == stored else {
        return .corrupt
      }
      guard header.keyLength == expectedKey.count,
        expectedKey.withUnsafeBytes({ $0.elementsEqual(buffer[keyRange]) })
      else { return .otherKey }
      return .entry(
        storedAt: header.storedAt, expiresAt: header.expiresAt,
        value: keyRange.upperBound..<keyRange.upperBound + header.valueLength)
    }
  }

  struct Header {
    var keyLength: Int
    var valueLength: Int
    var storedAt: Double
    var expiresAt: Double
  }

  /// Reads and validates the header against the file's size.
  static func header(_ buffer: UnsafeRawBufferPointer) -> Header? {
    header(buffer, fileSize: buffer.count)
  }

  /// Reads the header at the start of `buffer` (the file's first bytes, at least
  /// ``headerSize`` of them) and validates it against the file's whole size.
  static func header(_ buffer: UnsafeRawBufferPointer, fileSize: Int) -> Header? {
    var reader = ByteReader(buffer)
    guard buffer.count >= headerSize, fileSize >= overhead,
      let magicBytes = reader.readBytes(4), magicBytes.elementsEqual(magic),
      reader.readUInt8() == version, reader.readUInt8() == 0, reader.readUInt8() == 0, reader.readUInt8() == 0,
      let keyLength = reader.readUInt32(), let valueLength = reader.readUInt64(),
      let storedAt = reader.readDouble(), let expiresAt = reader.readDouble(),
      !storedAt.isNaN, !expiresAt.isNaN,
      valueLength <= UInt64(Int.max - overhead - Int(keyLength)),
      overhead + Int(keyLength) + Int(valueLength) == fileSize
    else { return nil }
    return Header(keyLength: Int(keyLength), valueLength: Int(valueLength), storedAt: storedAt, expiresAt: expiresAt)
  }
}
