import Foundation
import Testing

@testable import KilnStorage

@Suite("Checksums and digests")
struct ChecksumTests {
  @Test(
    "SHA-256 matches the FIPS 180-4 test vectors",
    arguments: [
      ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
      ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
      (
        "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
      ),
      (String(repeating: "a", count: 1_000), "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"),
    ])
  func sha256(message: String, expected: String) {
    let digest = SHA256.hash(Array(message.utf8))
    #expect(digest.map { String(format: "%02x", $0) }.joined() == expected)
  }

  @Test(
    "SHA-256 matches hashlib around the 64-byte block and 56-byte padding boundaries",
    arguments: [
      (55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"),
      (56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"),
      (63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"),
      (64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"),
      (65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"),
      (119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"),
      (120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"),
      (128, "6836cf13bac400e9105071cd6af47084dfacad4e5e302c94bfed24e013afb73e"),
    ])
  func sha256AtBlockBoundaries(length: Int, expected: String) {
    let digest = SHA256.hash([UInt8](repeating: UInt8(ascii: "a"), count: length))
    #expect(digest.map { String(format: "%02x", $0) }.joined() == expected)
  }

  @Test("SHA-256 fed in pieces of any size, in hardware or software, equals SHA-256 of the whole")
  func sha256InPieces() {
    let bytes = (0..<700).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ 5) }
    let whole = SHA256.hash(bytes)
    for piece in [1, 3, 55, 63, 64, 65, 128, 200] {
      var hasher = SHA256()
      var start = 0
      while start < bytes.count {
        let end = min(start + piece, bytes.count)
        bytes.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[start..<end])) }
        start = end
      }
      #expect(hasher.finalize() == whole, "pieces of \(piece)")
    }
    // The software compression, which a processor without SHA instructions runs, agrees.
    for length in [0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 700] {
      var hardware = SHA256()
      var software = SHA256(hardware: false)
      hardware.update(bytes[..<length])
      software.update(bytes[..<length])
      #expect(software.finalize() == hardware.finalize(), "length \(length)")
    }
    var software = SHA256(hardware: false)
    software.update(Array("abc".utf8))
    #expect(
      software.finalize().map { String(format: "%02x", $0) }.joined()
        == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    // A sequence without contiguous storage takes the copying path.
    #expect(SHA256.hash(bytes.lazy.map { $0 }) == whole)
    #expect(bytes.withUnsafeBytes { KeyDigest.sha256($0) } == KeyDigest.sha256(bytes))
  }

  @Test(
    "CRC-32 matches zlib's for short and long inputs",
    arguments: [
      ("", UInt32(0)),
      ("a", UInt32(0xE8B7_BE43)),
      ("123456789", UInt32(0xCBF4_3926)),
      ("The quick brown fox jumps over the lazy dog", UInt32(0x414F_A339)),
    ])
  func crc32(message: String, expected: UInt32) {
    #expect(CRC32.checksum(Array(message.utf8)) == expected)
  }

  @Test("CRC-32 equals a bit-by-bit reference for every length around the 16-byte steps, at every alignment")
  func crc32AgainstBitwiseReference() {
    /// The definition, one bit at a time: slow and obviously right.
    func reference(_ bytes: some Collection<UInt8>) -> UInt32 {
      var crc: UInt32 = 0xFFFF_FFFF
      for byte in bytes {
        crc ^= UInt32(byte)
        for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
      }
      return ~crc
    }
    let bytes = (0..<1_100).map { UInt8(truncatingIfNeeded: $0 &* 151 &+ 13) }
    for offset in 0..<8 {
      for length in Array(0...70) + [255, 256, 257, 1_024, 1_092] {
        let slice = bytes[offset..<offset + length]
        let fast = bytes.withUnsafeBytes {
          CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[offset..<offset + length]))
        }
        #expect(fast == reference(slice), "offset \(offset), length \(length)")
      }
    }
  }

  @Test("CRC-32 in hardware, where the processor has it, equals the software loop at every length and alignment")
  func crc32HardwareAgainstSoftware() {
    let bytes = (0..<5_000).map { UInt8(truncatingIfNeeded: $0 &* 193 &+ 71) }
    bytes.withUnsafeBytes { buffer in
      for offset in 0..<16 {
        for length in Array(0...400) + [1_024, 1_040, 1_092, 4_096, 4_984] {
          let slice = UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + length])
          #expect(
            CRC32.checksum(slice) == CRC32.softwareChecksum(slice), "offset \(offset), length \(length)")
          #expect(
            CRC32.checksum(slice, continuing: 0x1234_5678) == CRC32.softwareChecksum(slice, continuing: 0x1234_5678),
            "offset \(offset), length \(length), continuing")
        }
      }
    }
  }

  @Test("CRC-32 of a long buffer equals the checksum computed in pieces")
  func crc32Continuation() {
    let bytes = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    let whole = CRC32.checksum(bytes)
    let first = bytes.withUnsafeBytes { CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[..<3_333])) }
    let both = bytes.withUnsafeBytes {
      CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[3_333...]), continuing: first)
    }
    #expect(whole == both)
    var flipped = bytes
    flipped[5_000] ^= 0x01
    #expect(CRC32.checksum(flipped) != whole)
  }

  @Test("a key digest is the first half of the key's SHA-256, and its path joins directory and file name")
  func digestPaths() {
    for key in ["", "key", "../../etc/passwd", String(repeating: "é", count: 100)] {
      let bytes = Array(key.utf8)
      let digest = KeyDigest.sha256(bytes)
      let hash = SHA256.hash(bytes)
      let expected = hash[..<16].map { String(format: "%02x", $0) }.joined()
      #expect(digest.fileName == expected, "key \(key)")
      for directory in ["/tmp/cache", "", "/données/çache 2", "/" + String(repeating: "d", count: 300)] {
        #expect(digest.path(in: directory) == directory + "/" + expected)
      }
    }
  }

  @Test("a key digest round-trips through its 32-character file name, and only such names parse")
  func digestFileNames() {
    let digest = KeyDigest.sha256(Array("key".utf8))
    let name = digest.fileName
    #expect(name.count == 32)
    #expect(name.allSatisfy { "0123456789abcdef".contains($0) })
    #expect(KeyDigest(fileName: name) == digest)
    #expect(KeyDigest(fileName: "not-a-digest") == nil)
    #expect(KeyDigest(fileName: String(name.dropLast()) + "G") == nil)
    #expect(KeyDigest(fileName: name + "0") == nil)
    #expect(KeyDigest.sha256(Array("key".utf8)) == KeyDigest.sha256(Array("key".utf8)))
    #expect(KeyDigest.sha256(Array("key".utf8)) != KeyDigest.sha256(Array("kez".utf8)))
  }
}
