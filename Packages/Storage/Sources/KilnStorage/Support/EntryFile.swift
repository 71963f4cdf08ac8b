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
  static func encode(
    key: some Collection<UInt8>,
    value: some Collection<UInt8>,
    storedAt: Double,
    expiresAt: Double
  ) -> [UInt8] {
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
    /// The entry; `value` indexes the file's bytes (the tail's, when decoded in two parts).
    case entry(storedAt: Double, expiresAt: Double, value: Range<Int>)
  }

  /// Decodes a file's bytes, checking its shape, checksum and key.
  static func decode(_ bytes: [UInt8], expectedKey: [UInt8]) -> Decoded {
    bytes.withUnsafeBytes { buffer in
      expectedKey.withUnsafeBytes { expectedKey in
        let split = min(headerSize + expectedKey.count, buffer.count)
        let decoded = decode(
          head: UnsafeRawBufferPointer(rebasing: buffer[..<split]),
          tail: UnsafeRawBufferPointer(rebasing: buffer[split...]), expectedKey: expectedKey)
        guard case .entry(let storedAt, let expiresAt, let value) = decoded else { return decoded }
        return .entry(
          storedAt: storedAt, expiresAt: expiresAt, value: split + value.lowerBound..<split + value.upperBound)
      }
    }
  }

  /// Decodes a file read in two parts, checking its shape, checksum and key: `head`, its
  /// first `headerSize + expectedKey.count` bytes (fewer when the file is shorter), and
  /// `tail`, the rest. In an entry of the expected key the tail is the value then the
  /// checksum, so ``Decoded/entry(storedAt:expiresAt:value:)`` indexes `tail`, from 0.
  static func decode(
    head: UnsafeRawBufferPointer,
    tail: UnsafeRawBufferPointer,
    expectedKey: UnsafeRawBufferPointer
  ) -> Decoded {
    let size = head.count + tail.count
    guard let header = header(head, fileSize: size) else { return .corrupt }
    // The checksum covers every byte but the last four, which hold it. A valid header
    // implies at least `overhead` bytes, but they straddle the two parts when the stored
    // key is shorter than the expected one.
    var stored: UInt32 = 0
    for index in 0..<4 {
      let position = size - 4 + index
      let byte = position < head.count ? head[position] : tail[position - head.count]
      stored |= UInt32(byte) << UInt32(index * 8)
    }
    let computed =
      tail.count >= 4
      ? CRC32.checksum(
        UnsafeRawBufferPointer(rebasing: tail[..<(tail.count - 4)]), continuing: CRC32.checksum(head))
      : CRC32.checksum(UnsafeRawBufferPointer(rebasing: head[..<(size - 4)]))
    guard computed == stored else { return .corrupt }
    guard header.keyLength == expectedKey.count,
      expectedKey.elementsEqual(UnsafeRawBufferPointer(rebasing: head[headerSize..<headerSize + header.keyLength]))
    else { return .otherKey }
    // The key fills the head exactly, so the value starts the tail.
    return .entry(storedAt: header.storedAt, expiresAt: header.expiresAt, value: 0..<header.valueLength)
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
