// SHA-256 (FIPS 180-4), used to derive stable file names from keys.
//
// Swift's `Hasher` is seeded randomly per process, so it cannot name files that must be
// found again after a restart; Foundation has no SHA-256 on Linux, and library products
// take no package dependency. This is the plain, portable algorithm, with each block
// compressed by the processor's SHA instructions where it has them (CKilnChecksum: the
// x86-64 SHA extensions).

import CKilnChecksum

/// Computes the SHA-256 digest of a byte sequence.
///
/// Every `DiskCache` access hashes its key, so nothing here allocates: the partial block
/// lives inline, whole blocks are compressed straight from the caller's bytes, and the
/// message schedule is a stack buffer.
struct SHA256 {
  private static let roundConstants: [UInt32] = [
    0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
    0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
    0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
    0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
    0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
    0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
    0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
    0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
  ]

  typealias Words = (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32)

  private var state: Words = (
    0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19
  )
  /// The bytes of the current, incomplete block (64 bytes, inline: no heap allocation).
  private var block: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
  private var blockCount = 0
  private var totalLength: UInt64 = 0
  /// Whether blocks may be compressed by the processor's SHA instructions (where present).
  private let hardware: Bool

  /// A hasher over the empty message.
  ///
  /// - Parameter hardware: `false` compresses every block in Swift even where the processor
  ///   has SHA instructions (for tests that compare the two).
  init(hardware: Bool = true) {
    self.hardware = hardware
  }

  /// The digest of `bytes`.
  static func hash(_ bytes: some Sequence<UInt8>) -> [UInt8] {
    var hasher = SHA256()
    hasher.update(bytes)
    return hasher.finalize()
  }

  /// Adds `bytes` to the message.
  mutating func update(_ bytes: some Sequence<UInt8>) {
    let done: Void? = bytes.withContiguousStorageIfAvailable { update(UnsafeRawBufferPointer($0)) }
    if done == nil { Array(bytes).withUnsafeBytes { update($0) } }
  }

  /// Adds `bytes` to the message.
  mutating func update(_ bytes: UnsafeRawBufferPointer) {
    guard var position = bytes.baseAddress, !bytes.isEmpty else { return }
    var remaining = bytes.count
    totalLength &+= UInt64(remaining)
    if blockCount > 0 {
      let taken = min(64 - blockCount, remaining)
      withUnsafeMutableBytes(of: &block) { block in
        (block.baseAddress! + blockCount).copyMemory(from: position, byteCount: taken)
      }
      blockCount += taken
      position += taken
      remaining -= taken
      guard blockCount == 64 else { return }
      compressBlock()
      blockCount = 0
    }
    while remaining >= 64 {
      Self.compress(&state, position, hardware: hardware)
      position += 64
      remaining -= 64
    }
    if remaining > 0 {
      withUnsafeMutableBytes(of: &block) { block in
        block.baseAddress!.copyMemory(from: position, byteCount: remaining)
      }
      blockCount = remaining
    }
  }

  /// Pads the message and returns the 32-byte digest.
  mutating func finalize() -> [UInt8] {
    let words = finalizeWords()
    var digest: [UInt8] = []
    digest.reserveCapacity(32)
    for word in [words.0, words.1, words.2, words.3, words.4, words.5, words.6, words.7] {
      digest.append(UInt8(truncatingIfNeeded: word >> 24))
      digest.append(UInt8(truncatingIfNeeded: word >> 16))
      digest.append(UInt8(truncatingIfNeeded: word >> 8))
      digest.append(UInt8(truncatingIfNeeded: word))
    }
    return digest
  }

  /// Pads the message and returns the digest as its eight big-endian words, without
  /// allocating (what ``KeyDigest`` reads on every `DiskCache` access).
  mutating func finalizeWords() -> Words {
    let bitLength = totalLength &* 8
    let count = blockCount
    withUnsafeMutableBytes(of: &block) { block in
      block[count] = 0x80
      (block.baseAddress! + count + 1).initializeMemory(as: UInt8.self, repeating: 0, count: 63 - count)
    }
    if count >= 56 {
      compressBlock()
      block = (0, 0, 0, 0, 0, 0, 0, 0)
    }
    block.7 = bitLength.bigEndian
    compressBlock()
    blockCount = 0
    return state
  }

  private mutating func compressBlock() {
    let block = block
    withUnsafeBytes(of: block) { Self.compress(&state, $0.baseAddress!, hardware: hardware) }
  }

  /// Compresses the 64 bytes at `block` into `state`.
  private static func compress(_ state: inout Words, _ block: UnsafeRawPointer, hardware: Bool) {
    if hardware {
      let compressed = withUnsafeMutableBytes(of: &state) { words in
        kiln_sha256_hardware(words.baseAddress!.assumingMemoryBound(to: UInt32.self), block, 1)
      }
      if compressed != 0 { return }
    }
    // The message schedule lives on the stack: an array here allocated once per block.
    withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
      roundConstants.withUnsafeBufferPointer { constants in
        compress(&state, block, schedule: w.baseAddress!, constants: constants.baseAddress!)
      }
    }
  }

  @inline(__always)
  private static func compress(
    _ state: inout Words,
    _ block: UnsafeRawPointer,
    schedule w: UnsafeMutablePointer<UInt32>,
    constants: UnsafePointer<UInt32>
  ) {
    for t in 0..<16 {
      w[t] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: t &* 4, as: UInt32.self))
    }
    for t in 16..<64 {
      let s0 = rotate(w[t &- 15], 7) ^ rotate(w[t &- 15], 18) ^ (w[t &- 15] >> 3)
      let s1 = rotate(w[t &- 2], 17) ^ rotate(w[t &- 2], 19) ^ (w[t &- 2] >> 10)
      w[t] = w[t &- 16] &+ s0 &+ w[t &- 7] &+ s1
    }
    var (a, b, c, d, e, f, g, h) = state
    for t in 0..<64 {
      let s1 = rotate(e, 6) ^ rotate(e, 11) ^ rotate(e, 25)
      let choice = (e & f) ^ (~e & g)
      let temp1 = h &+ s1 &+ choice &+ constants[t] &+ w[t]
      let s0 = rotate(a, 2) ^ rotate(a, 13) ^ rotate(a, 22)
      let majority = (a & b) ^ (a & c) ^ (b & c)
      let temp2 = s0 &+ majority
      h = g
      g = f
      f = e
      e = d &+ temp1
      d = c
      c = b
      b = a
      a = temp1 &+ temp2
    }
    state = (
      state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e, state.5 &+ f, state.6 &+ g, state.7 &+ h
    )
  }

  @inline(__always)
  private static func rotate(_ value: UInt32, _ count: UInt32) -> UInt32 {
    (value >> count) | (value << (32 &- count))
  }
}
