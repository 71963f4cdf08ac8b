import Foundation
import _KilnSynchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// One exchange (one request, one response, no redirect followed) of a ``URLSessionTransport``:
/// the state its session delegate feeds as the response streams in, and the continuation the
/// calling task waits on.
///
/// Every callback of the delegate arrives on the session's serial delegate queue, in order; the
/// calling task only starts the exchange and may cancel it from any thread. The mutex keeps
/// both sides consistent; user callbacks (progress) are called outside it.
final class URLSessionTransfer: Sendable {
  private struct State {
    var continuation: CheckedContinuation<HTTPResponse, any Error>?
    var task: URLSessionTask?
    var failure: TransportError?
    var response: HTTPURLResponse?
    var status: Int?
    var headers = HTTPHeaders()
    var accumulator: BodyAccumulator
    var isCancelled = false
  }

  private let state: KilnMutex<State>
  private let options: TransportOptions

  init(options: TransportOptions) {
    self.options = options
    state = KilnMutex(State(accumulator: BodyAccumulator(limit: options.maximumBodySize, reportsProgress: false)))
  }

  /// Records the task and the continuation; returns `false` when the calling task was
  /// cancelled already (the task must not start).
  func start(_ task: URLSessionTask, continuation: CheckedContinuation<HTTPResponse, any Error>) -> Bool {
    state.withLock { state in
      if state.isCancelled { return false }
      state.task = task
      state.continuation = continuation
      return true
    }
  }

  /// Cancels the exchange because the calling task was cancelled.
  func cancel() {
    let task = state.withLock { state -> URLSessionTask? in
      state.isCancelled = true
      if state.failure == nil { state.failure = .cancelled }
      return state.task
    }
    task?.cancel()
  }

  /// The response head arrived.
  ///
  /// - Returns: Whether to go on receiving the body.
  func didReceive(_ response: URLResponse) -> Bool {
    guard let http = response as? HTTPURLResponse else {
      return fail(.other("The response is not an HTTP response."))
    }
    let headers = Self.headers(of: http)
    let follows = RedirectPolicy.follows(status: http.statusCode, headers: headers, redirects: options.redirects)
    let error = state.withLock { state -> TransportError? in
      state.response = http
      state.status = http.statusCode
      state.headers = headers
      state.accumulator = BodyAccumulator(limit: options.maximumBodySize, reportsProgress: !follows)
      // A body the transport decodes (gzip, deflate) arrives longer than its Content-Length.
      let decoded = headers.contains("Content-Encoding")
      let length = http.expectedContentLength >= 0 && !decoded ? http.expectedContentLength : nil
      return state.accumulator.expect(contentLength: length)
    }
    if let error { return fail(error) }
    return true
  }

  /// Body bytes arrived.
  ///
  /// - Returns: Whether to go on receiving the body.
  func didReceive(_ data: Data) -> Bool {
    let outcome = state.withLock { state -> (TransportError?, (Int64, Int64?)?) in
      if let error = state.accumulator.append(data) { return (error, nil) }
      return (nil, state.accumulator.progress())
    }
    if let error = outcome.0 { return fail(error) }
    if let (received, expected) = outcome.1 { options.onProgress?(received, expected) }
    return true
  }

  /// The exchange ended, with `error` when it failed.
  ///
  /// - Parameters:
  ///   - response: The task's response. FoundationNetworking reports a redirect it was told not
  ///     to follow only here, never through the delegate; its body is then lost.
  ///   - error: The failure, or `nil`.
  func didComplete(response: URLResponse?, error: (any Error)?) {
    if error == nil, let response, state.withLock({ $0.status == nil && $0.failure == nil }) {
      _ = didReceive(response)
    }
    let (continuation, result) = state.withLock {
      state -> (CheckedContinuation<HTTPResponse, any Error>?, Result<HTTPResponse, TransportError>) in
      let continuation = state.continuation
      state.continuation = nil
      state.task = nil
      if let failure = state.failure { return (continuation, .failure(failure)) }
      if let error {
        var mapped = TransportError(urlSessionError: error)
        // libcurl reports a body cut short ("transfer closed with n bytes remaining") or a
        // connection reset mid-body as an unknown error; other unknown errors (such as an
        // unrecognized content encoding) stay `.other`.
        if case .other(let description) = mapped, state.status != nil,
          Self.lostConnectionMessages.contains(where: { description.contains($0) })
        {
          mapped = .connectionLost
        }
        return (continuation, .failure(mapped))
      }
      guard let status = state.status else {
        return (continuation, .failure(.other("The exchange ended without a response.")))
      }
      let response = HTTPResponse(
        status: status, headers: state.headers, body: state.accumulator.body, url: state.response?.url)
      return (continuation, .success(response))
    }
    continuation?.resume(with: result.mapError { $0 as any Error })
  }

  /// Records `error` (unless one is recorded already) and cancels the task.
  private func fail(_ error: TransportError) -> Bool {
    let task = state.withLock { state -> URLSessionTask? in
      if state.failure == nil { state.failure = error }
      return state.task
    }
    task?.cancel()
    return false
  }

  /// What libcurl says when the connection failed after the response head.
  private static let lostConnectionMessages = ["transfer closed", "Recv failure", "Connection reset"]

  /// The header fields of `response`.
  static func headers(of response: HTTPURLResponse) -> HTTPHeaders {
    var headers = HTTPHeaders()
    for (name, value) in response.allHeaderFields {
      guard let name = name as? String else { continue }
      headers.add(value as? String ?? "\(value)", for: name)
    }
    return headers
  }
}
