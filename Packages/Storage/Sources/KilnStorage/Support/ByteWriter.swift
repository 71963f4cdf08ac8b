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
