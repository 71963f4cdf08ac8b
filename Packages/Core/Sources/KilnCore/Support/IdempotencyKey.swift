public import Foundation

/// A key that names one logical write, so that a server applies it once however many times
/// it is sent.
///
/// Make one when the user makes the change, store it with the change, and send it with
/// every attempt, after a restart too, as the `Idempotency-Key` request header
/// (IETF draft-ietf-httpapi-idempotency-key-header):
///
/// ```swift
/// let key = IdempotencyKey()
/// request.headers["Idempotency-Key"] = key.headerValue   // "\"8e2a…\"", a structured-field string
/// ```
///
/// A key is a random (version 4) UUID: 122 random bits from the system's generator. It is
/// never derived from a counter, which would start again after a reinstall while the server
/// still remembers the old keys, and so "deduplicate" a new write away. A write whose
/// payload changes (a conflict resolved into a new change) needs a new key: a server answers
/// a known key with another payload with `422 Unprocessable Content`.
public struct IdempotencyKey: Hashable, Sendable, Codable, CustomStringConvertible {
  /// The key's UUID.
  public let uuid: UUID

  /// A new random key.
  public init() {
    uuid = UUID()
  }

  /// The key of `uuid`, for a key read back from storage.
  public init(uuid: UUID) {
    self.uuid = uuid
  }

  /// The key written as `string`: a UUID in its usual form, in either letter case, with or
  /// without the double quotes of ``headerValue``; `nil` for anything else.
  public init?(_ string: some StringProtocol) {
    var text = Substring(string)
    if text.count >= 2, text.first == "\"", text.last == "\"" { text = text.dropFirst().dropLast() }
    guard let uuid = UUID(uuidString: String(text)) else { return nil }
    self.uuid = uuid
  }

  /// The key's 16 bytes, in the UUID's order.
  public var bytes: [UInt8] {
    withUnsafeBytes(of: uuid.uuid) { Array($0) }
  }

  /// The key of 16 bytes in the UUID's order; `nil` when `bytes` does not hold 16.
  public init?(bytes: some Collection<UInt8>) {
    guard bytes.count == 16 else { return nil }
    var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    withUnsafeMutableBytes(of: &value) { buffer in
      for (index, byte) in bytes.enumerated() { buffer[index] = byte }
    }
    uuid = UUID(uuid: value)
  }

  /// The key in lower case, as `8e2a0c1e-…`.
  public var description: String {
    uuid.uuidString.lowercased()
  }

  /// The value of an `Idempotency-Key` header field: the key as a structured-field string
  /// (RFC 9651), in double quotes.
  public var headerValue: String {
    "\"\(description)\""
  }
}
