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

  /// Parses the values of one targeted cache-control field (RFC 9213, such as
  /// `CDN-Cache-Control`): a structured-field dictionary (RFC 8941) of the same directives.
  ///
  /// Member parameters are ignored, a member whose value is the boolean false (`?0`) is
  /// absent, and one whose value is true (`?1`) or missing is present without an argument.
  ///
  /// - Parameter values: The field's lines.
  /// - Returns: The directives; `nil` when the field is empty or is not a valid dictionary, so
  ///   that the cache falls back to `Cache-Control` (RFC 9213 §2.1).
  init?(targeted values: [String]) {
    var members: [String] = []
    for value in values {
      // An empty member (`a,,b`, a trailing comma) makes the dictionary invalid (RFC 8941
      // §4.2.2), though a plain list would skip it.
      guard !Self.hasEmptyMember(value) else { return nil }
      HTTPHeaders.splitList(value, into: &members)
    }
    // A key given again overwrites the earlier value, across lines too (RFC 8941 §4.2.2):
    // kept in first-seen order, last value wins, `?0` removes.
    var order: [String] = []
    var latest: [String: String?] = [:]
    /// Records `name` with `argument` (`.some(nil)`: a flag), or removes it (`nil`).
    func set(_ name: String, _ argument: String??) {
      guard let argument else {
        latest.removeValue(forKey: name)
        order.removeAll { $0 == name }
        return
      }
      if latest.index(forKey: name) == nil { order.append(name) }
      latest[name] = .some(argument)
    }
    for member in members {
      // The member, then its parameters: `;`-separated outside quoted strings.
      var segments: [ArraySlice<UInt8>] = []
      HTTPHeaders.forEachPart(of: member, separatedBy: UInt8(ascii: ";")) { segments.append(Array($0.utf8)[...]) }
      // Parameters are ignored, but must be well formed: `key` or `key=bare-item`.
      for parameter in segments.dropFirst() {
        let parameter = parameter.drop { $0 == UInt8(ascii: " ") }
        let equals = parameter.firstIndex(of: UInt8(ascii: "=")) ?? parameter.endIndex
        guard Self.isStructuredKey(parameter[..<equals]) else { return nil }
        if equals < parameter.endIndex {
          guard Self.isStructuredBareItem(parameter[parameter.index(after: equals)...]) else { return nil }
        }
      }
      let item = segments[0]
      let keyEnd = item.firstIndex(of: UInt8(ascii: "=")) ?? item.endIndex
      let key = item[..<keyEnd]
      guard Self.isStructuredKey(key) else { return nil }
      let name = String(decoding: key, as: UTF8.self)
      guard keyEnd < item.endIndex else {
        // A bare key is the boolean true: the wrong type for a directive that takes a number.
        guard !Self.integerDirectives.contains(name) else { return nil }
        set(name, .some(nil))
        continue
      }
      let value = item[item.index(after: keyEnd)...]
      guard Self.isStructuredBareItem(value), Self.hasExpectedType(value, for: name) else { return nil }
      if value.elementsEqual("?0".utf8) {
        set(name, nil)
      } else if value.elementsEqual("?1".utf8) {
        set(name, .some(nil))
      } else {
        set(name, .some(String(decoding: value, as: UTF8.self)))
      }
    }
    guard !members.isEmpty else { return nil }
    self.init()
    for name in order {
      guard let argument = latest[name] else { continue }
      parse(argument.map { name + "=" + $0 } ?? name)
    }
  }

  /// Whether `value` has an empty list member outside quoted strings: two commas with only
  /// whitespace between them, or one at either end.
  private static func hasEmptyMember(_ value: String) -> Bool {
    // A value that is only whitespace has no member at all (not an empty one).
    guard value.utf8.contains(UInt8(ascii: ",")) else { return false }
    var hasEmpty = false
    HTTPHeaders.forEachPart(of: value, separatedBy: UInt8(ascii: ",")) { part in
      if HTTPHeaders.trimmingWhitespace(part).isEmpty { hasEmpty = true }
    }
    return hasEmpty
  }

  /// The directives whose value is a number of seconds: an integer in a targeted field.
  private static let integerDirectives: Set<String> = [
    "max-age", "s-maxage", "stale-while-revalidate", "stale-if-error", "min-fresh",
  ]

  /// The directives that are flags: a boolean (or a bare key) in a targeted field.
  private static let flagDirectives: Set<String> = [
    "no-store", "no-transform", "must-revalidate", "proxy-revalidate", "must-understand", "public",
    "immutable", "only-if-cached",
  ]

  /// Whether `value` has the type RFC 9213 gives directive `name` in a targeted field: an
  /// integer for a number of seconds, a string (of field names) or a boolean for `no-cache`
  /// and `private`, a boolean for a flag; any type for an extension. A field with a member of
  /// the wrong type is invalid as a whole, so that the cache falls back to `Cache-Control`.
  private static func hasExpectedType(_ value: ArraySlice<UInt8>, for name: String) -> Bool {
    let first = value.first
    let isBoolean = first == UInt8(ascii: "?")
    if integerDirectives.contains(name) {
      let isNumber = first == UInt8(ascii: "-") || (first.map { $0 >= 0x30 && $0 <= 0x39 } ?? false)
      return isNumber && !value.contains(UInt8(ascii: "."))
    }
    if name == "no-cache" || name == "private" { return isBoolean || first == UInt8(ascii: "\"") }
    if flagDirectives.contains(name) { return isBoolean }
    return true
  }

  /// An RFC 8941 key: a lowercase letter or `*`, then lowercase letters, digits, `_`, `-`,
  /// `.` or `*`.
  private static func isStructuredKey(_ key: ArraySlice<UInt8>) -> Bool {
    guard let first = key.first, (first >= 0x61 && first <= 0x7A) || first == UInt8(ascii: "*") else {
      return false
    }
    return key.dropFirst().allSatisfy { byte in
      (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || "_-.*".utf8.contains(byte)
    }
  }

  /// An RFC 8941 bare item: an integer, a decimal, a string, a token, a byte sequence or a
  /// boolean.
  private static func isStructuredBareItem(_ item: ArraySlice<UInt8>) -> Bool {
    guard let first = item.first else { return false }
    // An inner list, `(a b)`: a valid value, of the wrong type for every known directive.
    if first == UInt8(ascii: "("), item.last == UInt8(ascii: ")") { return true }
    func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
    func isAlpha(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A }
    switch first {
    case UInt8(ascii: "-"), 0x30...0x39:
      let number = first == UInt8(ascii: "-") ? item.dropFirst() : item[...]
      let parts = number.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
      guard parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(isDigit) }) else { return false }
      return parts.count == 1 ? parts[0].count <= 15 : parts.count == 2 && parts[0].count <= 12 && parts[1].count <= 3
    case UInt8(ascii: "\""):
      guard item.count >= 2, item.last == UInt8(ascii: "\"") else { return false }
      var escaped = false
      for byte in item.dropFirst().dropLast() {
        guard byte >= 0x20 && byte < 0x7F else { return false }
        if escaped {
          guard byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { return false }
          escaped = false
        } else if byte == UInt8(ascii: "\\") {
          escaped = true
        } else if byte == UInt8(ascii: "\"") {
          return false
        }
      }
      return !escaped
    case UInt8(ascii: "?"):
      return item.count == 2 && (item.last == UInt8(ascii: "0") || item.last == UInt8(ascii: "1"))
    case UInt8(ascii: ":"):
      guard item.count >= 2, item.last == UInt8(ascii: ":") else { return false }
      return item.dropFirst().dropLast().allSatisfy { isAlpha($0) || isDigit($0) || "+/=".utf8.contains($0) }
    default:
      guard isAlpha(first) || first == UInt8(ascii: "*") else { return false }
      return item.dropFirst().allSatisfy { byte in
        isAlpha(byte) || isDigit(byte) || "!#$%&'*+-.^_`|~:/".utf8.contains(byte)
      }
    }
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
