import KilnNetwork

/// The transport the stack's handlers send through: `--transport urlsession|asynchttpclient`.
///
/// `asynchttpclient` exists only in a build with the `AsyncHTTPClient` trait
/// (`swift build --traits AsyncHTTPClient`; `Scripts/soak.sh` adds it when given
/// `--transport asynchttpclient`).
enum SoakTransport: Sendable {
  /// The names `--transport` accepts.
  enum Kind: String {
    case urlsession, asynchttpclient
  }

  /// Foundation's URLSession (FoundationNetworking on Linux), the default.
  case urlSession(URLSessionTransport)
  #if AsyncHTTPClient
    /// swift-server's async-http-client: one `HTTPClient` for the run, shut down at its end.
    case asyncHTTPClient(AsyncHTTPClientTransport)
  #endif

  /// Whether this build can make a transport of `kind`.
  static func isAvailable(_ kind: Kind) -> Bool {
    switch kind {
    case .urlsession: return true
    case .asynchttpclient:
      #if AsyncHTTPClient
        return true
      #else
        return false
      #endif
    }
  }

  /// A transport of `kind` that gives up on a request after `timeout` without bytes.
  ///
  /// - Precondition: `isAvailable(kind)`.
  init(_ kind: Kind, timeout: Duration) {
    switch kind {
    case .urlsession:
      self = .urlSession(URLSessionTransport(timeout: timeout))
    case .asynchttpclient:
      #if AsyncHTTPClient
        self = .asyncHTTPClient(AsyncHTTPClientTransport(timeout: timeout))
      #else
        preconditionFailure("AsyncHTTPClientTransport needs the AsyncHTTPClient trait")
      #endif
    }
  }

  /// For the start banner.
  var name: String {
    switch self {
    case .urlSession: return "URLSessionTransport (Foundation's URLSession)"
    #if AsyncHTTPClient
      case .asyncHTTPClient: return "AsyncHTTPClientTransport (swift-server/async-http-client)"
    #endif
    }
  }

  /// The transport itself.
  var base: any Transport {
    switch self {
    case .urlSession(let transport): return transport
    #if AsyncHTTPClient
      case .asyncHTTPClient(let transport): return transport
    #endif
    }
  }

  /// The transport behind `cache`.
  func caching(in cache: HTTPCache) -> any Transport {
    switch self {
    case .urlSession(let transport): return transport.caching(in: cache)
    #if AsyncHTTPClient
      case .asyncHTTPClient(let transport): return transport.caching(in: cache)
    #endif
    }
  }

  /// Releases what the transport holds at the end of the run: the `HTTPClient` of an
  /// ``AsyncHTTPClientTransport``; nothing for URLSession.
  func shutdown() async throws {
    switch self {
    case .urlSession: break
    #if AsyncHTTPClient
      case .asyncHTTPClient(let transport): try await transport.shutdown()
    #endif
    }
  }
}
