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
