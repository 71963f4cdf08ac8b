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
