// Little-endian binary writing and bounds-checked reading for Kiln's file formats.

/// An append-only byte buffer that writes fixed-width integers little-endian.
struct ByteWriter {
  private(set) var bytes: [UInt8]

  init(capacity: Int = 0) {
    bytes = []
    bytes.reserveCapacity(capacity)
  }

  var count: Int { bytes.count }

  mutating func append(_ value: UInt8) {
    bytes.append(value)
  }

  mutating func append(_ value: UInt32) {
    withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
  }

  mutating func append(_ value: UInt64) {
    withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
  }

  /// Writes a `Double` by its bit pattern.
  mutating func append(_ value: Double) {
    append(value.bitPattern)
  }

  mutating func append(contentsOf other: some Collection<UInt8>) {
    bytes.append(contentsOf: other)
  }

  /// Overwrites four bytes at `offset` with `value`.
  mutating func set(_ value: UInt32, at offset: Int) {
    withUnsafeBytes(of: value.littleEndian) { source in
      for index in 0..<4 { bytes[offset + index] = source[index] }
    }
  }
}

/// Reads little-endian values from raw bytes; every read returns `nil` past the end
/// instead of trapping, so a truncated or corrupt file is a clean miss.
struct ByteReader {
  let buffer: UnsafeRawBufferPointer
  private(set) var offset: Int

  init(_ buffer: UnsafeRawBufferPointer, offset: Int = 0) {
    self.buffer = buffer
    self.offset = offset
  }

  var remaining: Int { buffer.count - offset }

  mutating func readUInt8() -> UInt8? {
    guard remaining >= 1 else { return nil }
    defer { offset += 1 }
    return buffer[offset]
  }

  mutating func readUInt32() -> UInt32? {
    guard remaining >= 4 else { return nil }
    defer { offset += 4 }
    return UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
  }

  mutating func readUInt64() -> UInt64? {
    guard remaining >= 8 else { return nil }
    defer { offset += 8 }
    return UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
  }

  mutating func readDouble() -> Double? {
    readUInt64().map(Double.init(bitPattern:))
  }

  /// The next `count` bytes, without copying; `nil` when fewer remain or `count` is absurd.
  mutating func readBytes(_ count: Int) -> UnsafeRawBufferPointer? {
    guard count >= 0, remaining >= count else { return nil }
    defer { offset += count }
    return UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + count])
  }
}
