#if AsyncHTTPClient
  public import AsyncHTTPClient
  import Foundation
  import NIOCore
  import NIOHTTP1

  /// A ``Transport`` built on swift-server's async-http-client (with the `AsyncHTTPClient`
  /// trait): SwiftNIO all the way, for servers.
  ///
  /// ```swift
  /// let transport = AsyncHTTPClientTransport()
  /// let response = try await transport.send(HTTPRequest(url: URL(string: "https://example.com")!))
  /// try await transport.shutdown()
  /// ```
  ///
  /// The transport uses one `HTTPClient` for its lifetime, so connections are pooled across
  /// requests: one it creates (on the shared event loop group) or one you pass in. Call
  /// ``shutdown()`` when you are done with a transport that created its client: an `HTTPClient`
  /// must be shut down before it is released.
  ///
  /// It behaves as ``URLSessionTransport`` does: the body streams in and
  /// ``TransportOptions/maximumBodySize`` is checked against `Content-Length` and as bytes arrive;
  /// ``TransportOptions/onProgress`` is called as they do; the transport follows redirects itself,
  /// never sending `Authorization`, `Cookie` or `Proxy-Authorization` to another origin; cancelling
  /// the calling task cancels the request. Unlike URLSession it does not decode `gzip` bodies: the
  /// body arrives as the server sent it.
  ///
  /// - Important: A request body given as ``HTTPRequest/Body/file(_:)`` is read into memory before
  ///   it is sent.
  public final class AsyncHTTPClientTransport: Transport {
    private let client: HTTPClient
    private let ownsClient: Bool

    /// Creates a transport with its own `HTTPClient` on the shared event loop group.
    ///
    /// The client follows no redirect itself (the transport does), does not decompress bodies,
    /// and fails a request at once when its connection cannot be made (instead of retrying until
    /// the connect timeout), so a refused connection is reported as such.
    ///
    /// - Parameters:
    ///   - timeout: How long a request may wait for the next bytes (the client's read timeout)
    ///     before it fails with ``TransportError/timedOut``; 60 seconds by default. Connecting
    ///     may take at most 10 seconds or `timeout`, whichever is shorter.
    public init(timeout: Duration = .seconds(60)) {
      let nanoseconds = timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000
      var pool = HTTPClient.Configuration.ConnectionPool()
      pool.retryConnectionEstablishment = false
      let configuration = HTTPClient.Configuration(
        redirectConfiguration: .disallow,
        timeout: HTTPClient.Configuration.Timeout(
          connect: .nanoseconds(min(nanoseconds, 10_000_000_000)), read: .nanoseconds(nanoseconds)),
        connectionPool: pool,
        decompression: .disabled
      )
      client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
      ownsClient = true
    }

    /// Creates a transport that sends through `client`, which you keep and shut down.
    ///
    /// - Parameter client: The client. Configure it with `redirectConfiguration: .disallow`:
    ///   a client that follows redirects itself forwards every header to the new location.
    public init(client: HTTPClient) {
      self.client = client
      ownsClient = false
    }

    /// Shuts down the client the transport created; does nothing for a client passed in.
    ///
    /// Requests still running fail. Call it once, when the transport is no longer used.
    ///
    /// - Throws: What `HTTPClient.shutdown()` throws.
    public func shutdown() async throws {
      guard ownsClient else { return }
      try await client.shutdown()
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
      let clientRequest = try Self.clientRequest(for: request)
      if Task.isCancelled { throw .cancelled }
      do {
        let response = try await client.execute(clientRequest, deadline: .distantFuture)
        var headers = HTTPHeaders()
        for field in response.headers {
          headers.add(field.value, for: field.name)
        }
        let status = Int(response.status.code)
        let follows = RedirectPolicy.follows(status: status, headers: headers, redirects: options.redirects)
        var body = BodyAccumulator(limit: options.maximumBodySize, reportsProgress: !follows)
        let length = response.headers.first(name: "Content-Length").flatMap { Int64($0) }
        if let error = body.expect(contentLength: length) { throw error }
        for try await buffer in response.body {
          if let error = body.append(buffer.readableBytesView) { throw error }
          if let (received, expected) = body.progress() {
            options.onProgress?(received, expected)
          }
        }
        if Task.isCancelled { throw TransportError.cancelled }
        return HTTPResponse(status: status, headers: headers, body: body.body, url: request.url)
      } catch {
        if Task.isCancelled { throw .cancelled }
        if let error = error as? TransportError { throw error }
        throw TransportError(asyncHTTPClientError: error)
      }
    }

    private static func clientRequest(for request: HTTPRequest) throws(TransportError) -> HTTPClientRequest {
      guard let scheme = request.url.scheme?.lowercased(), scheme == "http" || scheme == "https",
        request.url.host?.isEmpty == false
      else {
        throw .invalidRequest("Not an absolute http(s) URL: \(request.url.absoluteString)")
      }
      var clientRequest = HTTPClientRequest(url: request.url.absoluteString)
      clientRequest.method = NIOHTTP1.HTTPMethod(rawValue: request.method.rawValue)
      clientRequest.headers = NIOHTTP1.HTTPHeaders(request.headers.map { ($0.name, $0.value) })
      switch request.body {
      case nil:
        break
      case .data(let data):
        clientRequest.body = .bytes(ByteBuffer(bytes: data))
      case .file(let file):
        guard let data = try? Data(contentsOf: file) else {
          throw .invalidRequest("The body file cannot be read: \(file.path)")
        }
        clientRequest.body = .bytes(ByteBuffer(bytes: data))
      }
      return clientRequest
    }
  }
#endif
