/// Why a ``NetworkHandler`` request failed.
///
/// ```swift
/// do {
///   let user = try await handler.request(API.user(id: 7), as: User.self)
/// } catch .status(let response) where response.status == 404 {
///   // no such user
/// } catch .decoding(let error, let response) {
///   log("bad JSON from \(response.url?.absoluteString ?? "?"): \(error)")
/// } catch {
///   // the other cases
/// }
/// ```
public enum NetworkError: Error, Sendable {
  /// The target's URL could not be built (no scheme or host, or not a valid URL), with a
  /// description of what is wrong.
  case invalidURL(String)
  /// The request was configured with an invalid argument — such as a retry policy with fewer
  /// than 1 attempt — described.
  case invalidArgument(String)
  /// The target's body could not be encoded, described.
  case encodingFailed(String)
  /// No complete response arrived, for the transport's reason.
  case transport(TransportError)
  /// The response's status is not acceptable (by default, not 2xx). The response carries the
  /// status, the headers and the body.
  case status(HTTPResponse)
  /// The response's body could not be decoded into the requested type.
  case decoding(DecodingError, HTTPResponse)
  /// No response arrived within the handler's timeout.
  case timedOut(Duration)
  /// The task making the request was cancelled.
  case cancelled
  /// Authentication failed: the credential could not be refreshed, or was refreshed too often.
  case authentication(AuthenticationError)
  /// The handler is in the ``ResponseMode/alwaysFail`` mode.
  case simulatedFailure
  /// The handler is in the ``ResponseMode/sample`` mode, nothing valid is cached and the target
  /// has no sample data.
  case noSampleData

  /// The response that came with the failure, for ``status(_:)`` and ``decoding(_:_:)``.
  public var response: HTTPResponse? {
    switch self {
    case .status(let response), .decoding(_, let response): response
    default: nil
    }
  }

  /// The response's status code, for ``status(_:)`` and ``decoding(_:_:)``.
  public var statusCode: Int? {
    response?.status
  }

  /// Whether the failure is the cancellation of the calling task.
  public var isCancellation: Bool {
    if case .cancelled = self { return true }
    if case .transport(.cancelled) = self { return true }
    return false
  }
}

extension NetworkError: CustomStringConvertible {
  public var description: String {
    switch self {
    case .invalidURL(let reason): "invalid URL: \(reason)"
    case .invalidArgument(let reason): "invalid argument: \(reason)"
    case .encodingFailed(let reason): "the body could not be encoded: \(reason)"
    case .transport(let error): "transport error: \(error)"
    case .status(let response): "unacceptable status \(response.status)"
    case .decoding(let error, let response): "decoding failed (status \(response.status)): \(error)"
    case .timedOut(let timeout): "no response within \(timeout)"
    case .cancelled: "cancelled"
    case .authentication(let error): "authentication failed: \(error)"
    case .simulatedFailure: "failed by the alwaysFail response mode"
    case .noSampleData: "the target has no sample data"
    }
  }
}
