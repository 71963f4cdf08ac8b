import Foundation

/// The binary form in which ``HTTPCache`` keeps the stored responses of one URL.
///
/// `"KHC"`, a version byte, a variant count, then per variant: status, request and response
/// times, URL, header fields, `Vary` values and body, every string and byte run length-prefixed.
/// Decoding checks every length against the bytes left and rejects trailing bytes, so a
/// truncated or overwritten entry is detected and treated as a miss.
enum StoredResponseCodec {
  struct CorruptEntry: Error {}

  private static let magic: [UInt8] = [0x4B, 0x48, 0x43, 0x01]  // "KHC", version 1

  static func encode(_ variants: [StoredHTTPResponse]) -> Data {
    var bytes: [UInt8] = magic
    var capacity = 16
    for variant in variants { capacity += variant.response.body.count + 64 * (variant.response.headers.count + 2) }
    bytes.reserveCapacity(capacity)
    append(UInt32(variants.count), to: &bytes)
    for variant in variants {
      let response = variant.response
      append(UInt32(truncatingIfNeeded: response.status), to: &bytes)
      append(variant.requestTime.timeIntervalSince1970.bitPattern, to: &bytes)
      append(variant.responseTime.timeIntervalSince1970.bitPattern, to: &bytes)
      if let url = response.url {
        append(url.absoluteString, to: &bytes)
      } else {
        append(UInt32.max, to: &bytes)
      }
      append(UInt32(response.headers.count), to: &bytes)
      for field in response.headers {
        append(field.name, to: &bytes)
        append(field.value, to: &bytes)
      }
      let vary = variant.varyValues.sorted { $0.key < $1.key }
      append(UInt32(vary.count), to: &bytes)
      for (name, value) in vary {
        append(name, to: &bytes)
        append(value, to: &bytes)
      }
      append(UInt32(response.body.count), to: &bytes)
      bytes.append(contentsOf: response.body)
    }
    return Data(bytes)
  }

  static func decode(_ data: Data) throws(CorruptEntry) -> [StoredHTTPResponse] {
    do {
      return try data.withUnsafeBytes { buffer in try decode(buffer) }
    } catch {
      throw CorruptEntry()
    }
  }

  private static func decode(_ buffer: UnsafeRawBufferPointer) throws(CorruptEntry) -> [StoredHTTPResponse] {
    var reader = Reader(buffer: buffer)
    for byte in magic where try reader.byte() != byte { throw CorruptEntry() }
    let count = try reader.uint32()
    guard count <= 1024 else { throw CorruptEntry() }
    var variants: [StoredHTTPResponse] = []
    variants.reserveCapacity(Int(count))
    for _ in 0..<count {
      let status = Int(try reader.uint32())
      guard (100...999).contains(status) else { throw CorruptEntry() }
      let requestTime = Date(timeIntervalSince1970: Double(bitPattern: try reader.uint64()))
      let responseTime = Date(timeIntervalSince1970: Double(bitPattern: try reader.uint64()))
      guard requestTime.timeIntervalSince1970.isFinite, responseTime.timeIntervalSince1970.isFinite else {
        throw CorruptEntry()
      }
      var url: URL?
      if try reader.peekUInt32() == UInt32.max {
        _ = try reader.uint32()
      } else {
        guard let parsed = URL(string: try reader.string()) else { throw CorruptEntry() }
        url = parsed
      }
      let headerCount = try reader.uint32()
      var fields: [HTTPHeaders.Field] = []
      fields.reserveCapacity(Int(min(headerCount, 256)))
      for _ in 0..<headerCount {
        let name = try reader.string()
        let value = try reader.string()
        fields.append(HTTPHeaders.Field(name: name, value: value))
      }
      let varyCount = try reader.uint32()
      var vary: [String: String] = [:]
      for _ in 0..<varyCount {
        let name = try reader.string()
        vary[name] = try reader.string()
      }
      let body = try reader.data()
      variants.append(
        StoredHTTPResponse(
          response: HTTPResponse(status: status, headers: HTTPHeaders(fields), body: body, url: url),
          requestTime: requestTime, responseTime: responseTime, varyValues: vary))
    }
    guard reader.isAtEnd else { throw CorruptEntry() }
    return variants
  }

  // MARK: - Writing

  private static func append(_ value: UInt32, to bytes: inout [UInt8]) {
    withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
  }

  private static func append(_ value: UInt64, to bytes: inout [UInt8]) {
    withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
  }

  private static func append(_ string: String, to bytes: inout [UInt8]) {
    var string = string
    string.withUTF8 { utf8 in
      append(UInt32(utf8.count), to: &bytes)
      bytes.append(contentsOf: utf8)
    }
  }

  // MARK: - Reading

  private struct Reader {
    let buffer: UnsafeRawBufferPointer
    var position = 0

    var isAtEnd: Bool { position == buffer.count }

    mutating func byte() throws(CorruptEntry) -> UInt8 {
      guard position < buffer.count else { throw CorruptEntry() }
      defer { position += 1 }
      return buffer[position]
    }

    func peekUInt32() throws(CorruptEntry) -> UInt32 {
      guard buffer.count - position >= 4 else { throw CorruptEntry() }
      return UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: position, as: UInt32.self))
    }

    mutating func uint32() throws(CorruptEntry) -> UInt32 {
      let value = try peekUInt32()
      position += 4
      return value
    }

    mutating func uint64() throws(CorruptEntry) -> UInt64 {
      guard buffer.count - position >= 8 else { throw CorruptEntry() }
      defer { position += 8 }
      return UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: position, as: UInt64.self))
    }

    mutating func bytes() throws(CorruptEntry) -> UnsafeRawBufferPointer {
      let count = Int(try uint32())
      guard buffer.count - position >= count else { throw CorruptEntry() }
      defer { position += count }
      return UnsafeRawBufferPointer(rebasing: buffer[position..<position + count])
    }

    mutating func string() throws(CorruptEntry) -> String {
      let raw = try bytes()
      guard let string = String(validating: raw.assumingMemoryBound(to: UInt8.self), as: UTF8.self) else {
        throw CorruptEntry()
      }
      return string
    }

    mutating func data() throws(CorruptEntry) -> Data {
      Data(try bytes())
    }
  }
}
