#if OpenAPI
  import Foundation
  import KilnNetwork
  import OpenAPIRuntime
  import OpenAPIURLSession
  import Testing

  #if canImport(FoundationNetworking)
    import FoundationNetworking
  #endif

  /// How the generated client (`OpenAPI/Generated`) reaches KilnNetwork's stages in the loopback
  /// suites: both ways a user can put them in front of a generated client.
  enum OpenAPIRoute: CustomTestStringConvertible, Sendable {
    /// `OpenAPIClientTransport` over a chain of the stages and a real KilnNetwork transport.
    case transport(TransportKind)
    /// `OpenAPIClientMiddleware` running the stages in front of another OpenAPI transport:
    /// swift-openapi-urlsession's.
    case middleware

    /// Every route: each real transport, and the middleware.
    static var allCases: [OpenAPIRoute] {
      TransportKind.allCases.map { .transport($0) } + [.middleware]
    }

    var testDescription: String {
      switch self {
      case .transport(let kind): "OpenAPIClientTransport over \(kind.rawValue)"
      case .middleware: "OpenAPIClientMiddleware before OpenAPIURLSession"
      }
    }

    /// Runs `body` with a client of the server at `serverURL` whose requests go through
    /// `stages`, each with `context`.
    func withClient<Result: Sendable>(
      serverURL: URL,
      stages: [any RequestMiddleware],
      context: RequestContext = RequestContext(),
      _ body: (Client) async throws -> Result
    ) async throws -> Result {
      switch self {
      case .transport(let kind):
        return try await kind.withTransport { transport in
          let chain = RequestChain(transport: transport, middleware: stages)
          return try await body(
            Client(serverURL: serverURL, transport: OpenAPIClientTransport(chain: chain, context: context)))
        }
      case .middleware:
        // A session of its own, with no cache, and room for six requests in flight at once.
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.httpMaximumConnectionsPerHost = 8
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        let client = Client(
          serverURL: serverURL,
          transport: OpenAPIURLSession.URLSessionTransport(configuration: .init(session: session)),
          middlewares: [OpenAPIClientMiddleware(middleware: stages, context: context)])
        return try await body(client)
      }
    }
  }

  /// The `NetworkError` a generated client's call failed with: the `underlyingError` of its
  /// `ClientError`.
  func networkError(of error: any Error) -> NetworkError? {
    (error as? ClientError)?.underlyingError as? NetworkError
  }
#endif
