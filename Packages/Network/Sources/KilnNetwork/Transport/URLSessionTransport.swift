#if canImport(FoundationNetworking)
  import Foundation
  public import FoundationNetworking
#else
  public import Foundation
#endif

/// The default ``Transport``: `URLSession` (FoundationNetworking on Linux), one session per
/// transport.
///
/// ```swift
/// let transport = URLSessionTransport()
/// let response = try await transport.send(HTTPRequest(url: URL(string: "https://example.com")!))
/// response.status     // 200
/// ```
///
/// The transport owns one `URLSession` for its lifetime, so connections are reused across
/// requests. The session keeps no cache and no cookies of its own: its `urlCache` is `nil`,
/// every request ignores local cache data, and cookies are neither stored nor added, so the
/// session never interferes with KilnNetwork's HTTP cache and sends exactly the headers asked for.
///
/// The body streams in through the session's delegate: ``TransportOptions/maximumBodySize`` is
/// checked against `Content-Length` before any byte arrives and as bytes arrive otherwise, and
/// ``TransportOptions/onProgress`` is called as they do. The transport follows redirects itself
/// (the session never does), as ``TransportOptions/redirects`` allows, and never sends
/// `Authorization`, `Cookie` or `Proxy-Authorization` to another origin.
///
/// - Important: URLSession (libcurl on Linux) decodes `gzip` and `deflate` bodies itself; the
///   response then keeps its `Content-Encoding` header but holds the decoded body. On Linux a
///   body in an encoding libcurl does not know is a ``TransportError/other(_:)``, and the body of
///   a 3xx response (one returned because redirects are `.none`, or one without `Location`) is
///   always empty: FoundationNetworking drops it.
public final class URLSessionTransport: Transport {
  private let session: URLSession
  private let delegate: URLSessionTransportDelegate
  private let timeout: TimeInterval

  /// Creates a transport with its own session.
  ///
  /// - Parameters:
  ///   - timeout: How long a request may wait for the next bytes (URLSession's request timeout)
  ///     before it fails with ``TransportError/timedOut``; 60 seconds by default.
  ///   - configuration: The session configuration to start from; ephemeral by default. Its cache
  ///     and cookie settings are overridden as described above.
  public init(timeout: Duration = .seconds(60), configuration: URLSessionConfiguration = .ephemeral) {
    let configuration = configuration.copy() as! URLSessionConfiguration
    let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) * 1e-18
    configuration.urlCache = nil
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    configuration.httpCookieStorage = nil
    configuration.httpShouldSetCookies = false
    configuration.httpCookieAcceptPolicy = .never
    configuration.timeoutIntervalForRequest = seconds
    let delegate = URLSessionTransportDelegate()
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = 1
    queue.name = "KilnNetwork.URLSessionTransport"
    self.delegate = delegate
    self.timeout = seconds
    session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
  }

  deinit {
    // The session retains its delegate until it is invalidated.
    session.invalidateAndCancel()
  }

  public func send(_ request: HTTPRequest, options: TransportOptions) async throws(TransportError) -> HTTPResponse {
    try await RedirectPolicy.send(request, options: options) { (request) throws(TransportError) in
      try await exchange(request, options: options)
    }
  }

  /// Sends one request and receives its response, following no redirect.
  private func exchange(_ request: HTTPRequest, options: TransportOptions) async throws(TransportError)
    -> HTTPResponse
  {
    let task = try makeTask(for: request)
    let transfer = URLSessionTransfer(options: options)
    delegate.register(transfer, for: task)
    do {
      return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, any Error>) in
          if transfer.start(task, continuation: continuation) {
            task.resume()
          } else {
            delegate.unregister(task)
            task.cancel()
            continuation.resume(throwing: TransportError.cancelled)
          }
        }
      } onCancel: {
        transfer.cancel()
      }
    } catch let error as TransportError {
      throw error
    } catch {
      throw TransportError(urlSessionError: error)
    }
  }

  private func makeTask(for request: HTTPRequest) throws(TransportError) -> URLSessionTask {
    guard let scheme = request.url.scheme?.lowercased(), scheme == "http" || scheme == "https",
      request.url.host?.isEmpty == false
    else {
      throw .invalidRequest("Not an absolute http(s) URL: \(request.url.absoluteString)")
    }
    var urlRequest = URLRequest(url: request.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
    urlRequest.httpMethod = request.method.rawValue
    urlRequest.httpShouldHandleCookies = false
    for field in request.headers {
      urlRequest.addValue(field.value, forHTTPHeaderField: field.name)
    }
    switch request.body {
    case nil:
      return session.dataTask(with: urlRequest)
    case .data(let data):
      urlRequest.httpBody = data
      return session.dataTask(with: urlRequest)
    case .file(let file):
      guard FileManager.default.isReadableFile(atPath: file.path) else {
        throw .invalidRequest("The body file cannot be read: \(file.path)")
      }
      return session.uploadTask(with: urlRequest, fromFile: file)
    }
  }
}
