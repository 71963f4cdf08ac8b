// CRC-32 (IEEE 802.3, the polynomial of zlib and PNG): in hardware where the processor can
// (CKilnChecksum: PCLMULQDQ folding on x86-64, the CRC32 instructions on arm64), else
// slicing-by-16.
//
// Detects corrupt and torn records in DiskCache files and SerializableCache journals. Every
// DiskCache read checks the whole file, so this is on the read path: the hardware path
// checks 1 KB in a few dozen nanoseconds, about a tenth of the time of slicing-by-16, which
// itself takes two thirds of the time of the slicing-by-8 loop over an array it replaced
// (StorageBenchmarks, "DiskCache read"). Both compute the same checksum: the file format
// does not depend on the machine.

import CKilnChecksum

/// Computes CRC-32 checksums.
enum CRC32 {
  /// Sixteen 256-entry tables, one after the other: table 0 is the classic byte-wise table,
  /// table k advances a byte k positions further, which lets the loop consume sixteen bytes
  /// per step. Built once and never freed; immutable after that, so shared freely.
  private nonisolated(unsafe) static let tables: UnsafePointer<UInt32> = {
    let tables = UnsafeMutablePointer<UInt32>.allocate(capacity: 16 * 256)
    for byte in 0..<256 {
      var crc = UInt32(byte)
      for _ in 0..<8 {
        crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1
      }
      tables[byte] = crc
    }
    for byte in 0..<256 {
      var crc = tables[byte]
      for slice in 1..<16 {
        crc = (crc >> 8) ^ tables[Int(crc & 0xFF)]
        tables[slice * 256 + byte] = crc
      }
    }
    return UnsafePointer(tables)
  }()

  /// The checksum of `bytes`, continuing from `crc` (the checksum of the bytes before).
  static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
    guard let start = bytes.baseAddress else { return crc }
    var register = ~crc
    let consumed = kiln_crc32_hardware(&register, start, bytes.count)
    return softwareChecksum(
      UnsafeRawBufferPointer(start: start + consumed, count: bytes.count - consumed), continuing: ~register)
  }

  /// ``checksum(_:continuing:)`` without the hardware path: slicing-by-16 on every machine
  /// (for the hardware path's remainder, and for tests that compare the two).
  static func softwareChecksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
    var crc = ~crc
    guard var position = bytes.baseAddress else { return ~crc }
    var remaining = bytes.count
    let tables = tables
    /// The entry of table `slice` for the low byte of `word`.
    @inline(__always) func entry(_ slice: Int, _ word: UInt32) -> UInt32 {
      tables[slice &<< 8 &+ Int(word & 0xFF)]
    }
    while remaining >= 16 {
      let first = position.loadUnaligned(as: UInt32.self).littleEndian ^ crc
      let second = position.loadUnaligned(fromByteOffset: 4, as: UInt32.self).littleEndian
      let third = position.loadUnaligned(fromByteOffset: 8, as: UInt32.self).littleEndian
      let fourth = position.loadUnaligned(fromByteOffset: 12, as: UInt32.self).littleEndian
      crc =
        entry(15, first) ^ entry(14, first >> 8) ^ entry(13, first >> 16) ^ entry(12, first >> 24)
        ^ entry(11, second) ^ entry(10, second >> 8) ^ entry(9, second >> 16) ^ entry(8, second >> 24)
        ^ entry(7, third) ^ entry(6, third >> 8) ^ entry(5, third >> 16) ^ entry(4, third >> 24)
        ^ entry(3, fourth) ^ entry(2, fourth >> 8) ^ entry(1, fourth >> 16) ^ entry(0, fourth >> 24)
      position += 16
      remaining &-= 16
    }
    while remaining > 0 {
      crc = (crc >> 8) ^ entry(0, crc ^ UInt32(position.load(as: UInt8.self)))
      position += 1
      remaining &-= 1
    }
    return ~crc
  }

  /// The checksum of `bytes`.
  static func checksum(_ bytes: [UInt8]) -> UInt32 {
    bytes.withUnsafeBytes { checksum($0) }
  }
}
