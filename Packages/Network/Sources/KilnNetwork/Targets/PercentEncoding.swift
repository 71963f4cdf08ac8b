/// Exact percent-encoding of URL components (RFC 3986 §2.1), independent of Foundation's
/// platform differences.
enum PercentEncoding {
  /// `ALPHA / DIGIT / "-" / "." / "_" / "~"`: the only bytes never encoded in a query.
  static let unreserved: Set<UInt8> = {
    var set = Set<UInt8>()
    for byte in UInt8(ascii: "A")...UInt8(ascii: "Z") { set.insert(byte) }
    for byte in UInt8(ascii: "a")...UInt8(ascii: "z") { set.insert(byte) }
    for byte in UInt8(ascii: "0")...UInt8(ascii: "9") { set.insert(byte) }
    for byte in "-._~".utf8 { set.insert(byte) }
    return set
  }()

  /// The bytes left as they are in a path segment: the unreserved ones and the sub-delimiters,
  /// `:` and `@` that RFC 3986 allows there, except `+` (which some servers read as a space).
  static let pathSegment: Set<UInt8> = unreserved.union("!$&'()*,;=:@".utf8)

  private static let hexDigits = Array("0123456789ABCDEF".utf8)

  /// `text` with every UTF-8 byte not in `allowed` written as `%XX`.
  static func encode(_ text: String, allowing allowed: Set<UInt8>) -> String {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(text.utf8.count)
    for byte in text.utf8 {
      if allowed.contains(byte) {
        bytes.append(byte)
      } else {
        bytes.append(UInt8(ascii: "%"))
        bytes.append(hexDigits[Int(byte >> 4)])
        bytes.append(hexDigits[Int(byte & 0x0F)])
      }
    }
    return String(decoding: bytes, as: UTF8.self)
  }
}
