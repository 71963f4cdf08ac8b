import Foundation

/// How an HTTP cache handled a request, as the `Cache-Status` response header field of RFC 9211
/// tells it.
///
/// ``CachingTransport`` adds one `Cache-Status` member, named ``kilnCacheName``, to every response
/// it returns; read it with ``HTTPResponse/cacheStatus``:
///
/// ```swift
/// let response = try await transport.caching(in: cache).send(request)
/// response.cacheStatus?.hit            // true when served from the cache
/// response.cacheStatus?.forward        // .uriMiss, .stale, ... when the origin was asked
/// response.headers["Cache-Status"]     // "Kiln; fwd=stale; fwd-status=304; stored"
/// ```
public struct HTTPCacheStatus: Sendable, Hashable, CustomStringConvertible {
  /// The name Kiln's cache uses in `Cache-Status`.
  public static let kilnCacheName = "Kiln"

  /// Why a cache forwarded a request to the origin (RFC 9211 §2.2).
  public enum Forward: String, Sendable, Hashable {
    /// The cache was configured not to handle the request (such as a `Range` request).
    case bypass
    /// The request method is not cacheable.
    case method
    /// Nothing was stored for the URL.
    case uriMiss = "uri-miss"
    /// Responses were stored for the URL, but none matched the request's `Vary` fields.
    case varyMiss = "vary-miss"
    /// The request could not be answered from the cache for another reason.
    case miss
    /// The request's own directives (`no-cache`, `max-age`, ...) asked for the origin.
    case request
    /// The stored response was stale and had to be validated.
    case stale
  }

  /// The cache's name; ``kilnCacheName`` for Kiln.
  public var cache: String
  /// Whether the response was served from the cache without asking the origin.
  public var hit: Bool
  /// Why the request went to the origin, when it did.
  public var forward: Forward?
  /// The status the origin answered a forwarded request with (`304` after a revalidation).
  public var forwardStatus: Int?
  /// The response's remaining freshness in seconds when served; negative when stale.
  public var ttl: Int?
  /// Whether the cache stored (or updated) the response.
  public var stored: Bool
  /// Whether the request was combined with another one in flight.
  public var collapsed: Bool
  /// A free-form detail: `stale-while-revalidate`, `stale-if-error` or `generated` (a response
  /// the cache made itself, such as its 504 for `only-if-cached`).
  public var detail: String?

  /// Creates a status.
  public init(
    cache: String = HTTPCacheStatus.kilnCacheName,
    hit: Bool = false,
    forward: Forward? = nil,
    forwardStatus: Int? = nil,
    ttl: Int? = nil,
    stored: Bool = false,
    collapsed: Bool = false,
    detail: String? = nil
  ) {
    self.cache = cache
    self.hit = hit
    self.forward = forward
    self.forwardStatus = forwardStatus
    self.ttl = ttl
    self.stored = stored
    self.collapsed = collapsed
    self.detail = detail
  }

  /// The `detail` of a response the cache generated itself.
  public static let generatedDetail = "generated"

  /// Whether the cache generated the response itself instead of serving a stored one or the
  /// origin's (a 504 for `only-if-cached` or for a stale response that must be revalidated
  /// while the origin cannot be reached).
  public var isGenerated: Bool { detail == Self.generatedDetail }

  /// The member as written in a `Cache-Status` field, such as `Kiln; hit; ttl=42`.
  public var description: String {
    var text = cache
    if hit { text += "; hit" }
    if let forward { text += "; fwd=\(forward.rawValue)" }
    if let forwardStatus { text += "; fwd-status=\(forwardStatus)" }
    if let ttl { text += "; ttl=\(ttl)" }
    if stored { text += "; stored" }
    if collapsed { text += "; collapsed" }
    if let detail { text += "; detail=\(Self.isToken(detail) ? detail : "\"\(detail)\"")" }
    return text
  }

  /// Parses one member of a `Cache-Status` field, such as `Kiln; fwd=stale; fwd-status=304`.
  ///
  /// Unknown parameters are ignored; an unknown `fwd` value reads as ``Forward/miss``.
  ///
  /// - Parameter member: The list member.
  /// - Returns: The status, or `nil` when the member has no cache name.
  public init?(member: String) {
    let parts = member.split(separator: ";").map { HTTPHeaders.trimmingWhitespace(String($0)) }
    guard let name = parts.first.map(Self.unquote), !name.isEmpty else { return nil }
    self.init(cache: name)
    for part in parts.dropFirst() {
      let pieces = part.split(separator: "=", maxSplits: 1).map(String.init)
      let key = HTTPHeaders.canonicalName(pieces.first ?? "")
      let value = pieces.count > 1 ? Self.unquote(pieces[1]) : nil
      switch key {
      case "hit": hit = value == nil || value == "?1"
      case "fwd": forward = value.map { Forward(rawValue: $0) ?? .miss }
      case "fwd-status": forwardStatus = value.flatMap { Int($0) }
      case "ttl": ttl = value.flatMap { Int($0) }
      case "stored": stored = value == nil || value == "?1"
      case "collapsed": collapsed = value == nil || value == "?1"
      case "detail": detail = value
      default: break
      }
    }
  }

  private static func unquote(_ text: String) -> String {
    guard text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") else { return text }
    return String(text.dropFirst().dropLast()).replacingOccurrences(of: "\\\"", with: "\"")
  }

  private static func isToken(_ text: String) -> Bool {
    !text.isEmpty
      && text.utf8.allSatisfy { byte in
        (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A)
          || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
      }
  }
}
