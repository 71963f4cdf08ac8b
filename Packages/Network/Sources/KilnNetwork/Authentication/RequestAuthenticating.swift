/// What a ``NetworkHandler`` needs from its authentication: implemented by
/// ``AuthenticationInterceptor``, which most code uses as it is.
///
/// The handler calls ``authenticate(_:)`` before each attempt; when the response is a
/// rejection (``isRejection(_:for:)``), it calls ``refresh(rejectedGeneration:)`` with the
/// generation the attempt used and sends the request once more.
public protocol RequestAuthenticating: Sendable {
  /// Adds the current credential to `request`, waiting first for a refresh in flight.
  ///
  /// - Parameter request: The request about to be sent.
  /// - Returns: The generation of the credential added; it grows by one with each refresh.
  /// - Throws: ``NetworkError/cancelled`` when the task is cancelled while waiting.
  func authenticate(_ request: inout HTTPRequest) async throws(NetworkError) -> Int

  /// Whether `response` means the credential was rejected.
  ///
  /// - Parameters:
  ///   - response: The response.
  ///   - request: The request it answers, as sent.
  func isRejection(_ response: HTTPResponse, for request: HTTPRequest) -> Bool

  /// Makes sure the credential of generation `rejectedGeneration` is replaced: refreshes it,
  /// joins the refresh in flight, or returns at once when it was replaced already.
  ///
  /// - Parameter rejectedGeneration: The generation the rejected request was sent with.
  /// - Throws: ``NetworkError/authentication(_:)`` when the refresh failed or refreshes come
  ///   too often; ``NetworkError/cancelled`` when the task is cancelled while waiting.
  func refresh(rejectedGeneration: Int) async throws(NetworkError)
}
