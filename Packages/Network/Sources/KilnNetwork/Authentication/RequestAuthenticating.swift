/// What a ``NetworkHandler`` needs from its authentication: implemented by
/// ``AuthenticationInterceptor``, which most code uses as it is.
///
/// The handler calls ``authenticate(_:)`` before each attempt; when the response is a
/// rejection (``isRejection(_:for:)``), it calls ``refresh(rejectedGeneration:)`` with the
/// value ``authenticate(_:)`` returned for that attempt and, unless it throws, sends the
/// request once more.
public protocol RequestAuthenticating: Sendable {
  /// Adds the current credential to `request`, waiting first for a refresh in flight.
  ///
  /// - Parameter request: The request about to be sent.
  /// - Returns: The refresh round the credential was added in: it grows by one with each
  ///   refresh, successful or not, so that a rejection can tell whether a refresh has ended
  ///   since its request went out.
  /// - Throws: ``NetworkError/cancelled`` when the task is cancelled while waiting.
  func authenticate(_ request: inout HTTPRequest) async throws(NetworkError) -> Int

  /// Whether `response` means the credential was rejected.
  ///
  /// - Parameters:
  ///   - response: The response.
  ///   - request: The request it answers, as sent.
  func isRejection(_ response: HTTPResponse, for request: HTTPRequest) -> Bool

  /// Makes sure the round `rejectedGeneration` has ended: refreshes the credential, joins the
  /// refresh in flight, or returns the outcome of the refresh that ended that round (throwing
  /// its error when it failed, so that one failed refresh ends a whole burst of rejections).
  ///
  /// - Parameter rejectedGeneration: The round the rejected request was sent in.
  /// - Throws: ``NetworkError/authentication(_:)`` when the refresh failed or refreshes come
  ///   too often; ``NetworkError/cancelled`` when the task is cancelled while waiting.
  func refresh(rejectedGeneration: Int) async throws(NetworkError)
}
