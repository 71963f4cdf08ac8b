public import Foundation

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
  /// The stored response, headers as received (minus hop-by-hop fields).
  public let response: HTTPResponse
  /// When the request that produced the response was sent (`request_time` of RFC 9111 §4.2.3).
  public let requestTime: Date
  /// When the response was received (`response_time` of RFC 9111 §4.2.3).
  public let responseTime: Date
  /// The request's values of the header fields named by the response's `Vary`, keyed by
  /// lowercased name; a field the request did not carry has no key.
  public let varyValues: [String: String]

  /// The response's parsed `Cache-Control`.
  public let cacheControl: CacheControl
  /// The response's `Date`, or ``responseTime`` when it has none or an invalid one.
  public let dateValue: Date
  /// The response's `Age` in seconds, `0` when absent or invalid; of several values (one line
  /// holding a list, or several lines), the first.
  public let ageValue: Int
  /// The response's `Expires`: `nil` when absent, `.distantPast` when invalid (already expired,
  /// RFC 9111 §5.3) or when given more than once with different values.
  public let expires: Date?
  /// The response's `Last-Modified`, when valid.
  public let lastModified: Date?
  /// The response's `ETag`, when present.
  public let entityTag: String?
  /// The lowercased field names of the response's `Vary`; `["*"]` for `Vary: *`.
  public let varyNames: [String]

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
    self.response = response
    self.requestTime = requestTime
    self.responseTime = responseTime
    let headers = response.headers
    cacheControl = CacheControl(headers)
    dateValue = headers.first("Date").flatMap(HTTPDate.parse) ?? responseTime
    // A list (`Age: 7200, 0`, or one `Age` line after another) counts by its first member.
    ageValue = headers.listElements(for: "Age").first.flatMap { CacheControl.deltaSeconds($0) } ?? 0
    let expiresValues = headers.values(for: "Expires")
    if expiresValues.isEmpty {
      expires = nil
    } else if let first = HTTPDate.parse(expiresValues[0]),
      expiresValues.dropFirst().allSatisfy({ HTTPDate.parse($0) == first })
    {
      expires = first
    } else {
      expires = .distantPast
    }
    lastModified = headers.first("Last-Modified").flatMap(HTTPDate.parse)
    entityTag = headers.first("ETag")
    let names = headers.listElements(for: "Vary").map(HTTPHeaders.canonicalName)
    varyNames = names.contains("*") ? ["*"] : names
    if let varyValues {
      self.varyValues = varyValues
    } else if let request {
      self.varyValues = Self.varyValues(of: request, names: varyNames)
    } else {
      self.varyValues = [:]
    }
  }

  /// The request's values of the fields in `names`, normalised (every field line joined with
  /// `", "`), keyed by lowercased name.
  static func varyValues(of request: HTTPRequest, names: [String]) -> [String: String] {
    var values: [String: String] = [:]
    for name in names where name != "*" {
      let lines = request.headers.values(for: name)
      if !lines.isEmpty { values[name] = lines.joined(separator: ", ") }
    }
    return values
  }

  /// Whether this stored response may answer `request` as far as `Vary` is concerned
  /// (RFC 9111 §4.1): every field it varies on has the same value in both; never for `Vary: *`.
  public func matchesVary(of request: HTTPRequest) -> Bool {
    if varyNames.isEmpty { return true }
    for name in varyNames {
      if name == "*" { return false }
      let lines = request.headers.values(for: name)
      let value: String? = lines.isEmpty ? nil : lines.joined(separator: ", ")
      if value != varyValues[name] { return false }
    }
    return true
  }

  public static func == (lhs: StoredHTTPResponse, rhs: StoredHTTPResponse) -> Bool {
    lhs.response == rhs.response && lhs.requestTime == rhs.requestTime && lhs.responseTime == rhs.responseTime
      && lhs.varyValues == rhs.varyValues
  }

  public func hash(into hasher: inout Hasher) {
    hasher.combine(response)
    hasher.combine(requestTime)
    hasher.combine(responseTime)
    hasher.combine(varyValues)
  }
}
