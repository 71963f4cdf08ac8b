/// Sends HTTP requests: the one piece of KilnNetwork that touches the wire.
///
/// The handler, its retries, authentication and the HTTP cache are all written against this
/// protocol, so they behave the same on every transport: `URLSessionTransport` (the default;
/// FoundationNetworking on Linux), `AsyncHTTPClientTransport` (with the `AsyncHTTPClient`
/// trait) and `StubTransport` for tests. A transport may also wrap another one, as the HTTP
/// cache does.
///
/// A conforming type sends exactly one request per call (it follows redirects only as
/// ``TransportOptions/redirects`` allows), reads the body at most up to
/// ``TransportOptions/maximumBodySize`` while it streams in, and honours cancellation of the
/// calling task by cancelling the request and throwing ``TransportError/cancelled``.
public protocol Transport: Sendable {
  /// Sends `request` and returns the whole response, whatever its status.
  ///
  /// - Parameters:
  ///   - request: The request to send.
  ///   - options: Limits and callbacks for this request.
  /// - Returns: The response; a non-2xx status is a response, not an error.
  /// - Throws: ``TransportError`` when no complete response arrived.
  func send(_ request: HTTPRequest, options: TransportOptions) async throws(TransportError) -> HTTPResponse
}

extension Transport {
  /// Sends `request` with the default options.
  ///
  /// - Parameter request: The request to send.
  /// - Returns: The response, whatever its status.
  /// - Throws: ``TransportError`` when no complete response arrived.
  public func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
    try await send(request, options: TransportOptions())
  }
}

/// Limits and callbacks for one request sent through a ``Transport``.
public struct TransportOptions: Sendable {
  /// Which redirects a transport follows by itself.
  public enum Redirects: Sendable, Hashable {
    /// None: a 3xx response is returned as it is.
    case none
    /// Up to `limit` redirects in a row; more is ``TransportError/tooManyRedirects``.
    /// `Authorization`, `Cookie` and `Proxy-Authorization` are never sent to another host.
    case follow(limit: Int)
  }

  /// The largest response body accepted, in bytes; `nil` for no limit. A larger body is
  /// ``TransportError/bodyTooLarge(limit:)``, detected while it streams in (from
  /// `Content-Length` when given), never after buffering it whole.
  public var maximumBodySize: Int?

  /// The redirects followed; up to 10 by default.
  public var redirects: Redirects

  /// Called as the response body arrives with the bytes received so far and the expected total
  /// (from `Content-Length`) when known. Never called with fewer bytes than the call before.
  public var onProgress: (@Sendable (_ received: Int64, _ expected: Int64?) -> Void)?

  /// Creates options.
  ///
  /// - Parameters:
  ///   - maximumBodySize: The largest response body accepted, in bytes; `nil` for no limit.
  ///   - redirects: The redirects followed; up to 10 by default.
  ///   - onProgress: Called as the response body arrives.
  public init(
    maximumBodySize: Int? = nil,
    redirects: Redirects = .follow(limit: 10),
    onProgress: (@Sendable (_ received: Int64, _ expected: Int64?) -> Void)? = nil
  ) {
    self.maximumBodySize = maximumBodySize
    self.redirects = redirects
    self.onProgress = onProgress
  }
}

/// Why a transport returned no complete response.
public enum TransportError: Error, Sendable, Hashable {
  /// The request could not be built or sent as given (such as a URL with no host), with a
  /// description of what is wrong.
  case invalidRequest(String)
  /// The server refused the connection.
  case connectionRefused
  /// The host name could not be resolved.
  case cannotFindHost
  /// The connection was reset or lost before the whole response arrived (a truncated body
  /// included).
  case connectionLost
  /// The transport's own timeout passed before the response arrived.
  case timedOut
  /// The response body exceeded the limit, in bytes, given in ``TransportOptions/maximumBodySize``.
  case bodyTooLarge(limit: Int)
  /// More redirects in a row than ``TransportOptions/Redirects/follow(limit:)`` allows.
  case tooManyRedirects
  /// The TLS handshake or certificate validation failed.
  case secureConnectionFailed
  /// The calling task was cancelled.
  case cancelled
  /// Any other failure, described by the underlying transport.
  case other(String)

  /// Whether retrying the same request may succeed: the connection was refused, reset or lost,
  /// or the transport timed out.
  public var isTransient: Bool {
    switch self {
    case .connectionRefused, .connectionLost, .timedOut: true
    default: false
    }
  }
}
