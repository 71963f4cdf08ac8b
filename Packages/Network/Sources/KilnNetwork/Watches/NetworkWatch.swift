/// Sees — and may change — every attempt a ``NetworkHandler`` makes: Lynn's watches, Moya's
/// plugins.
///
/// For each attempt (the first and every retry), the handler calls ``prepare(_:for:)`` of each
/// watch in order, adds the credential, calls ``willSend(_:attempt:)``, sends, and calls
/// ``didReceive(_:for:attempt:)`` with the response (whatever its status) or the error.
///
/// ```swift
/// struct UserAgent: NetworkWatch {
///   func prepare(_ request: HTTPRequest, for target: any TargetGroup) -> HTTPRequest {
///     var request = request
///     request.headers["User-Agent"] = "Kiln/1.0"
///     return request
///   }
/// }
/// ```
///
/// Every method has a default that does nothing. Watches are called synchronously on the
/// request's task: keep them quick.
public protocol NetworkWatch: Sendable {
  /// Returns the request to send, changed or not.
  ///
  /// - Parameters:
  ///   - request: The request as built from the target (and changed by the watches before).
  ///   - target: The target it was built from.
  /// - Returns: The request to send.
  func prepare(_ request: HTTPRequest, for target: any TargetGroup) -> HTTPRequest

  /// Called just before an attempt is sent.
  ///
  /// - Parameters:
  ///   - request: The request as sent, credential included.
  ///   - attempt: The number of the attempt, from 1.
  func willSend(_ request: HTTPRequest, attempt: Int)

  /// Called when an attempt ends.
  ///
  /// - Parameters:
  ///   - result: The response, whatever its status, or why there is none.
  ///   - request: The request as sent.
  ///   - attempt: The number of the attempt, from 1.
  func didReceive(_ result: Result<HTTPResponse, NetworkError>, for request: HTTPRequest, attempt: Int)
}

extension NetworkWatch {
  public func prepare(_ request: HTTPRequest, for target: any TargetGroup) -> HTTPRequest { request }

  public func willSend(_ request: HTTPRequest, attempt: Int) {}

  public func didReceive(_ result: Result<HTTPResponse, NetworkError>, for request: HTTPRequest, attempt: Int) {}
}
