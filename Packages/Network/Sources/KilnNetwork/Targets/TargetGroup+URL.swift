public import Foundation

extension TargetGroup {
  /// The target's absolute URL: ``baseURL``, then each of ``pathSegments`` percent-encoded,
  /// then the task's query parameters percent-encoded in their order.
  ///
  /// A segment keeps `A–Z a–z 0–9 - . _ ~ ! $ & ' ( ) * , ; = : @` and encodes every other
  /// byte (`/`, `?`, `#`, `%`, `+`, space, non-ASCII); a query name or value keeps only
  /// `A–Z a–z 0–9 - . _ ~`. Empty segments are dropped, except a trailing one, which keeps a
  /// trailing `/`. A query of ``baseURL`` itself is kept before the parameters; a
  /// fragment is dropped.
  ///
  /// - Returns: The URL.
  /// - Throws: ``NetworkError/invalidURL(_:)`` when ``baseURL`` has no `http` or `https`
  ///   scheme or no host, or the result is not a valid URL.
  public func makeURL() throws(NetworkError) -> URL {
    guard let scheme = baseURL.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
      throw .invalidURL("the base URL \"\(baseURL.absoluteString)\" has no http or https scheme")
    }
    guard let host = baseURL.host, !host.isEmpty else {
      throw .invalidURL("the base URL \"\(baseURL.absoluteString)\" has no host")
    }
    var base = baseURL.absoluteString
    var baseQuery: Substring = ""
    if let mark = base.firstIndex(where: { $0 == "?" || $0 == "#" }) {
      baseQuery = base[mark...]
      base = String(base[..<mark])
    }
    while base.hasSuffix("/") { base.removeLast() }

    let segments = pathSegments
    var url = base
    for segment in segments where !segment.isEmpty {
      url += "/"
      url += PercentEncoding.encode(segment, allowing: PercentEncoding.pathSegment)
    }
    if segments.count > 1, segments.last == "" { url += "/" }

    var query = ""
    if baseQuery.hasPrefix("?") {
      query = String(baseQuery.dropFirst().prefix { $0 != "#" })
    }
    if let parameters = task.queryParameters, !parameters.isEmpty {
      if !query.isEmpty { query += "&" }
      query += parameters.percentEncoded
    }
    if !query.isEmpty { url += "?" + query }

    guard let result = URL(string: url) else {
      throw .invalidURL("\"\(url)\" is not a valid URL")
    }
    return result
  }

  /// The request the handler sends for this target, before watches and authentication change
  /// it: the URL from ``makeURL()``, ``method``, ``headers`` and the task's body with its
  /// `Content-Type` (a `Content-Type` in ``headers`` wins).
  ///
  /// - Returns: The request.
  /// - Throws: ``NetworkError/invalidURL(_:)`` or ``NetworkError/encodingFailed(_:)``.
  public func makeRequest() throws(NetworkError) -> HTTPRequest {
    var request = HTTPRequest(method: method, url: try makeURL())
    if let body = task.body {
      let encoded = try body.encoded()
      request.body = encoded.body
      if let contentType = encoded.contentType {
        request.headers.set(contentType, for: "Content-Type")
      }
    }
    if let headers {
      for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
        request.headers.set(value, for: name)
      }
    }
    return request
  }
}
