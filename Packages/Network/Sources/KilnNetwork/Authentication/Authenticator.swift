/// Adds a credential to requests and refreshes it when the server rejects it.
///
/// Implement it for your API's credential, then hand it to an ``AuthenticationInterceptor``:
///
/// ```swift
/// struct OAuth: Authenticator {
///   let tokens: TokenService
///
///   func apply(_ credential: Token, to request: inout HTTPRequest) {
///     request.headers["Authorization"] = "Bearer \(credential.accessToken)"
///   }
///
///   func refresh(_ credential: Token) async throws -> Token {
///     try await tokens.refresh(credential.refreshToken)
///   }
/// }
///
/// let handler = NetworkHandler(
///   transport: URLSessionTransport(),
///   authentication: AuthenticationInterceptor(authenticator: OAuth(tokens: tokens), credential: saved)
/// )
/// ```
public protocol Authenticator: Sendable {
  /// The credential, such as an OAuth token pair.
  associatedtype Credential: Sendable

  /// Adds `credential` to `request`, usually as an `Authorization` header.
  ///
  /// - Parameters:
  ///   - credential: The current credential.
  ///   - request: The request about to be sent.
  func apply(_ credential: Credential, to request: inout HTTPRequest)

  /// Returns a new credential to replace `credential`, which the server rejected.
  ///
  /// Called once for all the requests rejected together.
  ///
  /// - Parameter credential: The rejected credential.
  /// - Returns: The new credential.
  /// - Throws: Any error; every waiting request then fails with
  ///   ``AuthenticationError/refreshFailed(_:)``.
  func refresh(_ credential: Credential) async throws -> Credential

  /// Whether `response` means the credential was rejected; by default, status `401`.
  ///
  /// - Parameters:
  ///   - response: The response.
  ///   - request: The request it answers.
  func isRejection(_ response: HTTPResponse, for request: HTTPRequest) -> Bool
}

extension Authenticator {
  public func isRejection(_ response: HTTPResponse, for request: HTTPRequest) -> Bool {
    response.status == 401
  }
}
