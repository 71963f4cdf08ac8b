/// The directives of `Cache-Control` header fields (RFC 9111 §5.2, RFC 5861), parsed robustly.
///
/// Parsing follows what the RFC asks of a recipient:
/// - directive names are case-insensitive; arguments may be tokens or quoted strings
///   (`max-age=60` and `max-age="60"` mean the same);
/// - every `Cache-Control` field line counts, and list elements split on commas outside quotes;
/// - a directive given twice keeps its **first** value (RFC 9111 §4.2.1);
/// - a delta-seconds value larger than 2³¹ becomes 2³¹ (RFC 9111 §1.2.2);
/// - an invalid `max-age` or `s-maxage` (negative, not a number, missing) makes the response
///   stale: it counts as `0`. An invalid `stale-while-revalidate`, `stale-if-error`,
///   `min-fresh` or `max-stale` value is ignored as if the directive were absent, except that
///   `max-stale` without a value means "any staleness".
///
/// ```swift
/// let headers: HTTPHeaders = ["Cache-Control": "Max-Age=\"60\", public", "cache-control": "max-age=5"]
/// let directives = CacheControl(headers)
/// directives.maxAge      // 60 (the first one wins)
/// directives.isPublic    // true
/// ```
public struct CacheControl: Sendable, Hashable {
  /// The largest delta-seconds value kept; larger values are clamped to it (RFC 9111 §1.2.2).
  public static let maximumDeltaSeconds = 2_147_483_648

  /// `max-age`: in a response, its freshness lifetime; in a request, the largest age the client
  /// accepts. Seconds.
  public var maxAge: Int?
  /// `s-maxage`: the freshness lifetime for shared caches, in seconds.
  public var sharedMaxAge: Int?
  /// `max-stale` (request): how many seconds past its freshness a response may be;
  /// ``maximumDeltaSeconds`` when given without a value (any staleness).
  public var maxStale: Int?
  /// `min-fresh` (request): how many seconds a response must stay fresh.
  public var minFresh: Int?
  /// `no-cache` without field names: a stored response must be validated before use.
  public var noCache = false
  /// The lowercased field names of a qualified `no-cache="..."`: the response may be reused
  /// without validation, but without these fields (RFC 9111 §5.2.2.4).
  public var noCacheFields: [String] = []
  /// `no-store`: nothing of the exchange may be stored.
  public var noStore = false
  /// `no-transform`.
  public var noTransform = false
  /// `only-if-cached` (request): answer from the cache or with a 504.
  public var onlyIfCached = false
  /// `must-revalidate`: never serve the response stale.
  public var mustRevalidate = false
  /// `proxy-revalidate`: `must-revalidate` for shared caches only.
  public var proxyRevalidate = false
  /// `must-understand`: store only when the status code is understood.
  public var mustUnderstand = false
  /// `public`: any cache may store the response, even one that would not otherwise.
  public var isPublic = false
  /// `private` without field names: only a private cache may store the response.
  public var isPrivate = false
  /// The lowercased field names of a qualified `private="..."`: a shared cache may store the
  /// response, but without these fields (RFC 9111 §5.2.2.7).
  public var privateFields: [String] = []
  /// `immutable` (RFC 8246).
  public var immutable = false
  /// `stale-while-revalidate` (RFC 5861): seconds the response may be served stale while it is
  /// revalidated in the background.
  public var staleWhileRevalidate: Int?
  /// `stale-if-error` (RFC 5861): seconds the response may be served stale when revalidation
  /// fails with a server error or no response.
  public var staleIfError: Int?
  /// Every directive as written (names lowercased), in order, duplicates included; arguments
  /// are unquoted.
  public var directives: [(name: String, argument: String?)] {
    storedDirectives.map { ($0.name, $0.argument) }
  }

  private var storedDirectives: [Directive] = []

  private struct Directive: Sendable, Hashable {
    var name: String
    var argument: String?
  }

  /// Creates directives with nothing set.
  public init() {}

  /// Parses every `Cache-Control` field of `headers`.
  ///
  /// - Parameter headers: The request's or response's header fields.
  public init(_ headers: HTTPHeaders) {
    for field in headers where field.hasName("Cache-Control") {
      parse(field.value)
    }
  }

  /// Parses one `Cache-Control` field value.
  ///
  /// - Parameter value: Such as `"max-age=60, must-revalidate"`.
  public init(parsing value: String) {
    parse(value)
  }

  /// Whether the headers carry no `Cache-Control` directive at all.
  public var isEmpty: Bool { storedDirectives.isEmpty }

  /// Whether a directive named `name` is present (case-insensitive), including extensions.
  public func contains(_ name: String) -> Bool {
    storedDirectives.contains { HTTPHeaders.namesEqual($0.name, name) }
  }

  // MARK: - Parsing

  private mutating func parse(_ value: String) {
    var elements: [String] = []
    HTTPHeaders.splitList(value, into: &elements)
    for element in elements {
      let name: String
      var argument: String?
      if let equals = element.utf8.firstIndex(of: UInt8(ascii: "=")) {
        // No whitespace around `=` in the grammar: `max-age =60` names another directive and
        // `max-age= 60` has an invalid argument.
        name = HTTPHeaders.canonicalName(String(element[..<equals]))
        argument = Self.unquote(String(element[element.utf8.index(after: equals)...]))
      } else {
        name = HTTPHeaders.canonicalName(element)
      }
      guard !name.isEmpty else { continue }
      let isFirst = !storedDirectives.contains { $0.name == name }
      storedDirectives.append(Directive(name: name, argument: argument))
      guard isFirst else { continue }
      apply(name: name, argument: argument)
    }
  }

  private mutating func apply(name: String, argument: String?) {
    switch name {
    case "max-age": maxAge = Self.deltaSeconds(argument) ?? 0
    case "s-maxage": sharedMaxAge = Self.deltaSeconds(argument) ?? 0
    case "max-stale":
      if argument == nil {
        maxStale = Self.maximumDeltaSeconds
      } else if let seconds = Self.deltaSeconds(argument) {
        maxStale = seconds
      }
    case "min-fresh": minFresh = Self.deltaSeconds(argument)
    case "stale-while-revalidate": staleWhileRevalidate = Self.deltaSeconds(argument)
    case "stale-if-error": staleIfError = Self.deltaSeconds(argument)
    case "no-cache":
      if let argument { noCacheFields = Self.fieldNames(argument) } else { noCache = true }
    case "no-store": noStore = true
    case "no-transform": noTransform = true
    case "only-if-cached": onlyIfCached = true
    case "must-revalidate": mustRevalidate = true
    case "proxy-revalidate": proxyRevalidate = true
    case "must-understand": mustUnderstand = true
    case "public": isPublic = true
    case "private":
      if let argument { privateFields = Self.fieldNames(argument) } else { isPrivate = true }
    case "immutable": immutable = true
    default: break
    }
  }

  /// A delta-seconds value (RFC 9111 §1.2.2): one or more digits, clamped to 2³¹; `nil` when
  /// absent or not a non-negative integer.
  static func deltaSeconds(_ text: String?) -> Int? {
    guard let text, !text.isEmpty else { return nil }
    var value = 0
    for byte in text.utf8 {
      guard byte >= 0x30 && byte <= 0x39 else { return nil }
      if value < maximumDeltaSeconds {
        value = value * 10 + Int(byte - 0x30)
      }
    }
    return min(value, maximumDeltaSeconds)
  }

  private static func fieldNames(_ argument: String) -> [String] {
    var names: [String] = []
    HTTPHeaders.splitList(argument, into: &names)
    return names.map(HTTPHeaders.canonicalName)
  }

  private static func unquote(_ text: String) -> String {
    // Bytes, as `HTTPHeaders.splitList` reads them: a quote followed by a combining mark is
    // one `Character`, but still the quote that opened the quoted string.
    let bytes = text.utf8
    guard bytes.count >= 2, bytes.first == UInt8(ascii: "\""), bytes.last == UInt8(ascii: "\"") else {
      return text
    }
    var result: [UInt8] = []
    result.reserveCapacity(bytes.count - 2)
    var escaped = false
    for byte in bytes.dropFirst().dropLast() {
      if escaped {
        result.append(byte)
        escaped = false
      } else if byte == UInt8(ascii: "\\") {
        escaped = true
      } else {
        result.append(byte)
      }
    }
    return String(decoding: result, as: UTF8.self)
  }
}
