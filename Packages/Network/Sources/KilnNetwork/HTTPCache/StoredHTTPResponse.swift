public import Foundation
import _KilnSynchronization

/// A response as an HTTP cache keeps it: the response itself, when the exchange that produced
/// it started and ended, and the request header values it varies on.
///
/// The values the cache policy reads on every decision (`Cache-Control`, `Date`, `Age`,
/// `Expires`, `Last-Modified`, `ETag`, `Vary`) are parsed once, when the stored response is
/// created, so a fresh-hit decision parses nothing.
///
/// ```swift
/// let stored = StoredHTTPResponse(
///   response: HTTPResponse(status: 200, headers: ["Cache-Control": "max-age=60"]),
///   requestTime: sent, responseTime: received)
/// HTTPCachePolicy().freshnessLifetime(of: stored)   // 60
/// ```
public struct StoredHTTPResponse: Sendable, Hashable {
  /// The fields, in one immutable box: a stored response is copied several times on every
  /// cache hit (out of the decoded variants, into the decision), and a copy of the box is one
  /// reference count rather than one per field (a tenth of a fresh hit went to copying them).
  private final class Storage: Sendable {
    let response: HTTPResponse
    let requestTime: Date
    let responseTime: Date
    let varyValues: [String: String]
    let cacheControl: CacheControl
    let dateValue: Date
    let ageValue: Int
    let expires: Date?
    let lastModified: Date?
    let entityTag: String?
    let varyNames: [String]
    let targeted: [(name: String, directives: CacheControl)]
    /// The response last served from this one as a plain hit, with its whole age and ttl.
    let lastHit = KilnMutex<(age: Int, ttl: Int, response: HTTPResponse)?>(nil)

    init(
      response: HTTPResponse, requestTime: Date, responseTime: Date, varyValues: [String: String],
      cacheControl: CacheControl, dateValue: Date, ageValue: Int, expires: Date?, lastModified: Date?,
      entityTag: String?, varyNames: [String], targeted: [(name: String, directives: CacheControl)]
    ) {
      self.targeted = targeted
      self.response = response
      self.requestTime = requestTime
      self.responseTime = responseTime
      self.varyValues = varyValues
      self.cacheControl = cacheControl
      self.dateValue = dateValue
      self.ageValue = ageValue
      self.expires = expires
      self.lastModified = lastModified
      self.entityTag = entityTag
      self.varyNames = varyNames
    }
  }

  private let storage: Storage

  /// The valid targeted cache-control fields of the response (RFC 9213: `CDN-Cache-Control`
  /// and any other `*-Cache-Control`), parsed once, by lowercased name.
  var targetedCacheControls: [(name: String, directives: CacheControl)] { storage.targeted }

  /// The response served from this one as a plain fresh hit (`Age` of `age`, a `Cache-Status`
  /// of `hit; ttl=<ttl>`) when the last such hit had the same age and ttl, else `nil`: hits
  /// within the same second share one response instead of each copying the header fields and
  /// rendering both (a fifth of a hit). Tied to this stored response, so it is gone with it.
  func servedHit(age: Int, ttl: Int) -> HTTPResponse? {
    storage.lastHit.withLock { last in
      guard let last, last.age == age, last.ttl == ttl else { return nil }
      return last.response
    }
  }

  /// Remembers `response` as the one served as a plain hit at `age` with `ttl`.
  func rememberServedHit(_ response: HTTPResponse, age: Int, ttl: Int) {
    let previous = storage.lastHit.withLock { last in
      let previous = last
      last = (age, ttl, response)
      return previous
    }
    withExtendedLifetime(previous) {}
  }

  /// The stored response, headers as received (minus hop-by-hop fields).
  public var response: HTTPResponse { storage.response }
  /// When the request that produced the response was sent (`request_time` of RFC 9111 §4.2.3).
  public var requestTime: Date { storage.requestTime }
  /// When the response was received (`response_time` of RFC 9111 §4.2.3).
  public var responseTime: Date { storage.responseTime }
  /// The request's values of the header fields named by the response's `Vary`, normalised
  /// as requests are compared (list members trimmed; the `Accept` fields lowercased and
  /// sorted), keyed by lowercased name; a field the request did not carry has no key.
  public var varyValues: [String: String] { storage.varyValues }

  /// The response's parsed `Cache-Control`.
  public var cacheControl: CacheControl { storage.cacheControl }
  /// The response's `Date`, or ``responseTime`` when it has none or an invalid one.
  public var dateValue: Date { storage.dateValue }
  /// The response's `Age` in seconds, `0` when absent or invalid; of several values (one line
  /// holding a list, or several lines), the first.
  public var ageValue: Int { storage.ageValue }
  /// The response's `Expires`: `nil` when absent, `.distantPast` when invalid (already expired,
  /// RFC 9111 §5.3) or when given more than once with different values.
  public var expires: Date? { storage.expires }
  /// The response's `Last-Modified`, when valid.
  public var lastModified: Date? { storage.lastModified }
  /// The response's `ETag`, when present.
  public var entityTag: String? { storage.entityTag }
  /// The lowercased field names of the response's `Vary`; `["*"]` for `Vary: *`.
  public var varyNames: [String] { storage.varyNames }

  /// Creates a stored response.
  ///
  /// - Parameters:
  ///   - response: The response as received.
  ///   - requestTime: When its request was sent.
  ///   - responseTime: When it was received.
  ///   - varyValues: The request's values of the fields the response varies on; computed from
  ///     `request` when `nil`.
  ///   - request: The request, read only to compute `varyValues`.
  public init(
    response: HTTPResponse,
    requestTime: Date,
    responseTime: Date,
    varyValues: [String: String]? = nil,
    request: HTTPRequest? = nil
  ) {
    let headers = response.headers
    let cacheControl = CacheControl(headers)
    let dateValue = headers.first("Date").flatMap(HTTPDate.parse) ?? responseTime
    // A list (`Age: 7200, 0`, or one `Age` line after another) counts by its first member.
    let ageValue = headers.listElements(for: "Age").first.flatMap { CacheControl.deltaSeconds($0) } ?? 0
    let expiresValues = headers.values(for: "Expires")
    let expires: Date?
    if expiresValues.isEmpty {
      expires = nil
    } else if let first = HTTPDate.parse(expiresValues[0]),
      expiresValues.dropFirst().allSatisfy({ HTTPDate.parse($0) == first })
    {
      expires = first
    } else {
      expires = .distantPast
    }
    let names = headers.listElements(for: "Vary").map(HTTPHeaders.canonicalName)
    let varyNames = names.contains("*") ? ["*"] : names
    let values: [String: String]
    if let varyValues {
      // Normalised again: an entry stored before normalisation changed compares as it would now.
      values = Dictionary(uniqueKeysWithValues: varyValues.map { ($0, Self.normalizedVaryValue([$1], for: $0)) })
    } else if let request {
      values = Self.varyValues(of: request, names: varyNames)
    } else {
      values = [:]
    }
    storage = Storage(
      response: response, requestTime: requestTime, responseTime: responseTime, varyValues: values,
      cacheControl: cacheControl, dateValue: dateValue, ageValue: ageValue, expires: expires,
      lastModified: headers.first("Last-Modified").flatMap(HTTPDate.parse), entityTag: headers.first("ETag"),
      varyNames: varyNames, targeted: Self.targetedCacheControls(of: headers))
  }

  /// Every valid targeted cache-control field of `headers` (a name ending in
  /// `-cache-control`), by lowercased name, in the order they first appear.
  static func targetedCacheControls(of headers: HTTPHeaders) -> [(name: String, directives: CacheControl)] {
    var names: [String] = []
    for field in headers where isTargetedCacheControlName(field.name) {
      let name = HTTPHeaders.canonicalName(field.name)
      if !names.contains(name) { names.append(name) }
    }
    return names.compactMap { name in CacheControl(targeted: headers.values(for: name)).map { (name, $0) } }
  }

  /// Whether `name` is a targeted cache-control field's (`CDN-Cache-Control`, any case): a
  /// name ending in `-cache-control` after at least one byte, checked without allocating.
  static func isTargetedCacheControlName(_ name: String) -> Bool {
    let suffix = "-cache-control".utf8
    let utf8 = name.utf8
    guard utf8.count > suffix.count else { return false }
    return zip(utf8.suffix(suffix.count), suffix).allSatisfy { byte, expected in
      (byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte) == expected
    }
  }

  /// The request's values of the fields in `names`, normalised (``normalizedVaryValue(_:for:)``),
  /// keyed by lowercased name.
  static func varyValues(of request: HTTPRequest, names: [String]) -> [String: String] {
    var values: [String: String] = [:]
    for name in names where name != "*" {
      let lines = request.headers.values(for: name)
      if !lines.isEmpty { values[name] = normalizedVaryValue(lines, for: name) }
    }
    return values
  }

  /// The fields whose list members are case-insensitive and whose order carries no meaning
  /// (preference is given by `q` parameters): their members are compared sorted and
  /// lowercased.
  private static let unorderedFields: Set<String> = ["accept", "accept-charset", "accept-encoding", "accept-language"]

  /// The value of a field a response varies on, in the form two requests are compared in
  /// (RFC 9111 §4.1): its lines combined, its list members trimmed and joined with `", "`;
  /// for `Accept`, `Accept-Charset`, `Accept-Encoding` and `Accept-Language`, the members
  /// also lowercased, without whitespace around `;` and `=`, and sorted. So `en, de`,
  /// `de,en` and ` eN ,  De` select the same stored response.
  static func normalizedVaryValue(_ lines: [String], for name: String) -> String {
    var members: [String] = []
    for line in lines { HTTPHeaders.splitList(line, into: &members) }
    if unorderedFields.contains(name) {
      members = members.map { member in
        guard !member.utf8.contains(UInt8(ascii: "\"")) else { return member }
        var compact: [UInt8] = []
        for byte in member.utf8 where byte != UInt8(ascii: " ") && byte != UInt8(ascii: "\t") {
          compact.append(byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte)
        }
        return String(decoding: compact, as: UTF8.self)
      }.sorted()
    }
    return members.joined(separator: ", ")
  }

  /// Whether this stored response may answer `request` as far as `Vary` is concerned
  /// (RFC 9111 §4.1): every field it varies on has the same normalised value in both (list
  /// members trimmed, lines combined, and for the `Accept` fields case and order ignored);
  /// never for `Vary: *`.
  public func matchesVary(of request: HTTPRequest) -> Bool {
    matchesVary(of: request, selectingLanguage: false)
  }

  /// ``matchesVary(of:)``, or else: an `Accept-Language` that differs still matches when its
  /// one most preferred language range (highest `q`, above 0, no tie) selects the stored
  /// response's one `Content-Language` (RFC 4647 basic filtering): the origin has that
  /// language and the request prefers it to any other. Used to select a stored response only
  /// when none matches exactly, never to replace one.
  func matchesVary(of request: HTTPRequest, selectingLanguage: Bool) -> Bool {
    if varyNames.isEmpty { return true }
    for name in varyNames {
      if name == "*" { return false }
      let lines = request.headers.values(for: name)
      let value: String? = lines.isEmpty ? nil : Self.normalizedVaryValue(lines, for: name)
      if value != varyValues[name] {
        guard selectingLanguage, name == "accept-language", !lines.isEmpty, selectsContentLanguage(lines) else {
          return false
        }
      }
    }
    return true
  }

  /// The variant that answers `request`: the newest that matches its `Vary` fields exactly,
  /// else the newest whose `Content-Language` its most preferred language selects.
  static func selected(_ variants: [StoredHTTPResponse], for request: HTTPRequest) -> StoredHTTPResponse? {
    variants.first { $0.matchesVary(of: request) }
      ?? variants.first { $0.matchesVary(of: request, selectingLanguage: true) }
  }

  /// Whether the one most preferred range of `acceptLanguage` selects this response's one
  /// `Content-Language`.
  func selectsContentLanguage(_ acceptLanguage: [String]) -> Bool {
    let languages = response.headers.listElements(for: "Content-Language")
    guard languages.count == 1 else { return false }
    let tag = languages[0].lowercased()
    var members: [String] = []
    for line in acceptLanguage { HTTPHeaders.splitList(line, into: &members) }
    var best: (quality: Double, ranges: [String]) = (0, [])
    for member in members {
      let parts = member.split(separator: ";").map { HTTPHeaders.trimmingWhitespace(String($0)) }
      guard let range = parts.first?.lowercased(), !range.isEmpty else { continue }
      var quality = 1.0
      for parameter in parts.dropFirst() {
        let pair = parameter.split(separator: "=", maxSplits: 1).map { HTTPHeaders.trimmingWhitespace(String($0)) }
        if pair.count == 2, pair[0].lowercased() == "q" {
          guard let value = Double(pair[1]), (0...1).contains(value) else { return false }
          quality = value
        }
      }
      if quality > best.quality {
        best = (quality, [range])
      } else if quality == best.quality, quality > 0 {
        best.ranges.append(range)
      }
    }
    // A tie at the top leaves the choice to the origin.
    guard best.ranges.count == 1, let range = best.ranges.first, range != "*" else { return false }
    return tag == range || tag.hasPrefix(range + "-")
  }

  public static func == (lhs: StoredHTTPResponse, rhs: StoredHTTPResponse) -> Bool {
    if lhs.storage === rhs.storage { return true }
    return lhs.response == rhs.response && lhs.requestTime == rhs.requestTime && lhs.responseTime == rhs.responseTime
      && lhs.varyValues == rhs.varyValues
  }

  public func hash(into hasher: inout Hasher) {
    hasher.combine(response)
    hasher.combine(requestTime)
    hasher.combine(responseTime)
    hasher.combine(varyValues)
  }
}
