// CRC-32 (IEEE 802.3, the polynomial of zlib and PNG), slicing-by-8.
//
// Detects corrupt and torn records in DiskCache files and SerializableCache journals.

/// Computes CRC-32 checksums.
enum CRC32 {
  /// Eight 256-entry tables: table 0 is the classic byte-wise table, table k advances a
  /// byte k positions further, which lets the loop consume eight bytes per step.
  private static let tables: [UInt32] = {
    var tables = [UInt32](repeating: 0, count: 8 * 256)
    for byte in 0..<256 {
      var crc = UInt32(byte)
      for _ in 0..<8 {
        crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1
      }
      tables[byte] = crc
    }
    for byte in 0..<256 {
      var crc = tables[byte]
      for slice in 1..<8 {
        crc = (crc >> 8) ^ tables[Int(crc & 0xFF)]
        tables[slice * 256 + byte] = crc
      }
    }
    return tables
  }()

  /// The checksum of `bytes`, continuing from `crc` (the checksum of the bytes before).
  static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
    var crc = ~crc
    var index = 0
    let count = bytes.count
    tables.withUnsafeBufferPointer { table in
      while index + 8 <= count {
        let low = bytes.loadUnaligned(fromByteOffset: index, as: UInt32.self).littleEndian ^ crc
        let high = bytes.loadUnaligned(fromByteOffset: index + 4, as: UInt32.self).littleEndian
        crc =
          table[7 * 256 + Int(low & 0xFF)] ^ table[6 * 256 + Int((low >> 8) & 0xFF)]
          ^ table[5 * 256 + Int((low >> 16) & 0xFF)] ^ table[4 * 256 + Int(low >> 24)]
          ^ table[3 * 256 + Int(high & 0xFF)] ^ table[2 * 256 + Int((high >> 8) & 0xFF)]
          ^ table[1 * 256 + Int((high >> 16) & 0xFF)] ^ table[Int(high >> 24)]
        index += 8
      }
      while index < count {
        crc = (crc >> 8) ^ table[Int((crc ^ UInt32(bytes[index])) & 0xFF)]
        index += 1
      }
    }
    return ~crc
  }

  /// The checksum of `bytes`.
  static func checksum(_ bytes: [UInt8]) -> UInt32 {
    bytes.withUnsafeBytes { checksum($0) }
  }
}
