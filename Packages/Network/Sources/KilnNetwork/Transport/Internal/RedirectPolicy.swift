import Foundation

/// How the transports follow a redirect (RFC 9110 §15.4), the same on every transport.
///
/// Credentials (`Authorization`, `Cookie`, `Proxy-Authorization`) are dropped when the next
/// request goes to another origin (scheme, host or port: `127.0.0.1` and `localhost` are two
/// hosts) and are not restored by a later hop back.
enum RedirectPolicy {
  /// The statuses that redirect with a `Location`.
  static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]

  /// The header fields never sent to another origin.
  static let credentialFields = ["Authorization", "Cookie", "Proxy-Authorization"]

  /// Sends `request` through `exchange` (one request, one response) and follows redirects as
  /// `options` allows.
  ///
  /// - Throws: ``TransportError/tooManyRedirects`` past the limit, ``TransportError/cancelled``
  ///   when the calling task is cancelled between two exchanges, or what `exchange` throws.
  static func send(
    _ request: HTTPRequest, options: TransportOptions,
    exchange: (HTTPRequest) async throws(TransportError) -> HTTPResponse
  ) async throws(TransportError) -> HTTPResponse {
    var current = request
    var redirects = 0
    while true {
      let response = try await exchange(current)
      guard case .follow(let limit) = options.redirects, let next = nextRequest(after: response, to: current) else {
        return response
      }
      redirects += 1
      if redirects > limit { throw .tooManyRedirects }
      if Task.isCancelled { throw .cancelled }
      current = next
    }
  }

  /// Whether a response with `status` and `headers` would be followed under `redirects`.
  static func follows(status: Int, headers: HTTPHeaders, redirects: TransportOptions.Redirects) -> Bool {
    guard case .follow = redirects else { return false }
    return redirectStatuses.contains(status) && headers.contains("Location")
  }

  /// The request that follows `response` to `request`, or `nil` when the response is not a
  /// redirect that can be followed (not a redirect status, no or an unusable `Location`).
  ///
  /// - `303 See Other` becomes a `GET` without a body (a `HEAD` stays a `HEAD`); so does a `POST`
  ///   answered by `301` or `302`, as every browser does. `307` and `308` keep the method and body.
  static func nextRequest(after response: HTTPResponse, to request: HTTPRequest) -> HTTPRequest? {
    guard redirectStatuses.contains(response.status), let location = response.headers.first("Location"),
      let target = resolve(location, against: request.url)
    else { return nil }
    var next = request
    next.url = target
    let changesToGET =
      (response.status == 303 && request.method != .head)
      || ((response.status == 301 || response.status == 302) && request.method == .post)
    if changesToGET {
      next.method = .get
      next.body = nil
      for name in ["Content-Type", "Content-Length", "Content-Encoding", "Transfer-Encoding"] {
        next.headers.remove(name)
      }
    }
    if !isSameOrigin(request.url, target) {
      for name in credentialFields { next.headers.remove(name) }
    }
    return next
  }

  /// `location` resolved against `base`, without a fragment; `nil` unless it is http(s) with a host.
  static func resolve(_ location: String, against base: URL) -> URL? {
    guard let url = URL(string: location, relativeTo: base)?.absoluteURL,
      var components = URLComponents(url: url, resolvingAgainstBaseURL: true)
    else { return nil }
    components.fragment = nil
    guard let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
      let host = components.host, !host.isEmpty
    else { return nil }
    return components.url
  }

  /// Whether two URLs share scheme, host (ignoring ASCII case) and port.
  static func isSameOrigin(_ lhs: URL, _ rhs: URL) -> Bool {
    lhs.scheme?.lowercased() == rhs.scheme?.lowercased() && lhs.host?.lowercased() == rhs.host?.lowercased()
      && effectivePort(lhs) == effectivePort(rhs)
  }

  private static func effectivePort(_ url: URL) -> Int? {
    if let port = url.port { return port }
    switch url.scheme?.lowercased() {
    case "http": return 80
    case "https": return 443
    default: return nil
    }
  }
}
