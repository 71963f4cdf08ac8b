// The 128-bit name of a key on disk: the first half of the SHA-256 of its encoded bytes.
// Stable across processes and platforms (unlike Swift's randomly seeded `Hasher`).

/// A 128-bit digest of an encoded key.
struct KeyDigest: Hashable, Sendable {
  var high: UInt64
  var low: UInt64

  /// The SHA-256 based digest of `bytes`.
  static func sha256(_ bytes: [UInt8]) -> KeyDigest {
    bytes.withUnsafeBytes { sha256($0) }
  }

  /// The SHA-256 based digest of `bytes`, hashed in place (no copy, no allocation).
  static func sha256(_ bytes: UnsafeRawBufferPointer) -> KeyDigest {
    var hasher = SHA256()
    hasher.update(bytes)
    let words = hasher.finalizeWords()
    return KeyDigest(
      high: UInt64(words.0) << 32 | UInt64(words.1),
      low: UInt64(words.2) << 32 | UInt64(words.3))
  }

  private static let hexDigits = Array("0123456789abcdef".utf8)

  /// 32 lowercase hexadecimal digits.
  var fileName: String {
    String(unsafeUninitializedCapacity: 32) { buffer in
      writeHexDigits(into: UnsafeMutableBufferPointer(rebasing: buffer[...]))
      return 32
    }
  }

  /// `directory/fileName`, built in one allocation: every `DiskCache` read makes one, and
  /// joining the parts with `+` allocated four strings.
  func path(in directory: String) -> String {
    var directory = directory
    return directory.withUTF8 { prefix in
      String(unsafeUninitializedCapacity: prefix.count + 33) { buffer in
        _ = UnsafeMutableBufferPointer(rebasing: buffer[..<prefix.count]).initialize(from: prefix)
        buffer[prefix.count] = UInt8(ascii: "/")
        writeHexDigits(into: UnsafeMutableBufferPointer(rebasing: buffer[(prefix.count + 1)...]))
        return prefix.count + 33
      }
    }
  }

  /// Writes the 32 digits of ``fileName`` at the start of `buffer`.
  private func writeHexDigits(into buffer: UnsafeMutableBufferPointer<UInt8>) {
    for index in 0..<16 {
      let byte = UInt8(
        truncatingIfNeeded: (index < 8 ? high >> UInt64(56 - index * 8) : low >> UInt64(120 - index * 8)))
      buffer[index * 2] = Self.hexDigits[Int(byte >> 4)]
      buffer[index * 2 + 1] = Self.hexDigits[Int(byte & 0xF)]
    }
  }

  /// Parses a file name made by ``fileName``; `nil` for any other name.
  init?(fileName: some StringProtocol) {
    let utf8 = Array(fileName.utf8)
    guard utf8.count == 32 else { return nil }
    var high: UInt64 = 0
    var low: UInt64 = 0
    for (index, character) in utf8.enumerated() {
      let nibble: UInt64
      switch character {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = UInt64(character - UInt8(ascii: "0"))
      case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = UInt64(character - UInt8(ascii: "a") + 10)
      default: return nil
      }
      if index < 16 { high = high << 4 | nibble } else { low = low << 4 | nibble }
    }
    self.init(high: high, low: low)
  }

  init(high: UInt64, low: UInt64) {
    self.high = high
    self.low = low
  }
}
