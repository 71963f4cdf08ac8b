#if OpenAPI
  public import Foundation
  public import HTTPTypes
  public import OpenAPIRuntime

  /// A swift-openapi-runtime `ClientMiddleware` that runs KilnNetwork stages in front of
  /// another OpenAPI transport (with the `OpenAPI` trait): for a client that keeps its transport
  /// (swift-openapi-urlsession, swift-openapi-async-http-client) and wants Kiln's HTTP cache,
  /// retries and authentication.
  ///
  /// ```swift
  /// let client = Client(
  ///   serverURL: try Servers.Server1.url(),
  ///   transport: URLSessionTransport(),   // OpenAPIURLSession's
  ///   middlewares: [
  ///     OpenAPIClientMiddleware(middleware: [HTTPCaching(cache), Retrying(.default), Authenticating(interceptor)])
  ///   ]
  /// )
  /// ```
  ///
  /// The stages run as in a ``RequestChain`` whose transport is the middleware's `next` closure
  /// — the middlewares after this one and the client's transport. Each attempt the stages send
  /// goes through `next` with the operation's request (its method and header fields as the
  /// stages left them), and its response body is read whole, up to the context's
  /// ``RequestContext/maximumBodySize``. A redirect that reaches the stages is followed as the
  /// context's ``RequestContext/redirects`` allows; the transports of swift-openapi-urlsession
  /// and swift-openapi-async-http-client follow redirects themselves first.
  ///
  /// Every failure is a ``NetworkError``: an error of the transport after the middleware is
  /// read as a ``TransportError`` first (a `URLError` or an async-http-client error as
  /// KilnNetwork's own transports read it, a cancellation as ``TransportError/cancelled``, any
  /// other as ``TransportError/other(_:)`` with its description), so ``Retrying`` retries a
  /// refused or lost connection. The generated client hands the ``NetworkError`` back as the
  /// `underlyingError` of its `ClientError`.
  ///
  /// - Important: `next` may be called only while ``intercept(_:body:baseURL:operationID:next:)``
  ///   runs. Work a stage does after the response, or for other requests, cannot go through it:
  ///   when the middleware returns, it cancels what is still running through `next` (an attempt
  ///   ``AttemptTimeout`` gave up on, and ``HTTPCaching``'s background revalidation for
  ///   `stale-while-revalidate`, which therefore never updates the cache) and waits for it to
  ///   end; and a ``Deduplicating`` request that other operations joined is cancelled for them
  ///   when the operation that started it ends first. Use ``OpenAPIClientTransport`` to give the
  ///   stages a transport of their own.
  public struct OpenAPIClientMiddleware: ClientMiddleware {
    /// The stages, outermost (first to see a request) first.
    public let middleware: [any RequestMiddleware]

    /// The context of each request, from its OpenAPI operation ID.
    public let context: @Sendable (_ operationID: String) -> RequestContext

    /// The stages in front of a transport that is never used: each call replaces it with the
    /// operation's `next`, keeping the chain's counters, so that ``statistics`` counts every
    /// request the middleware ran.
    let chain: RequestChain

    /// What the stages did since the middleware was created: see ``RequestChain/statistics``.
    public var statistics: RequestStatistics {
      chain.statistics
    }

    /// Creates a middleware that runs `middleware`, every request with the same context.
    ///
    /// - Parameters:
    ///   - middleware: The stages, outermost first; pass a chain's ``RequestChain/middleware``
    ///     to run its stages (but not its transport).
    ///   - context: The context of every request; a plain context (no body limit, up to 10
    ///     redirects) by default.
    public init(middleware: [any RequestMiddleware], context: RequestContext = RequestContext()) {
      self.init(middleware: middleware, context: { _ in context })
    }

    /// Creates a middleware that runs `middleware`, with a context for each operation.
    ///
    /// - Parameters:
    ///   - middleware: The stages, outermost first.
    ///   - context: The context of a request, from its OpenAPI operation ID.
    public init(
      middleware: [any RequestMiddleware], context: @escaping @Sendable (_ operationID: String) -> RequestContext
    ) {
      self.middleware = middleware
      self.context = context
      chain = RequestChain(transport: UnusedTransport(), middleware: middleware)
    }

    /// Runs an OpenAPI operation's request through the stages, which send it through `next`.
    ///
    /// - Parameters:
    ///   - request: The request, its path relative to `baseURL`.
    ///   - body: The request body, read whole before the stages see it.
    ///   - baseURL: The server URL.
    ///   - operationID: The operation's ID, which picks the request's context.
    ///   - next: The middlewares after this one and the client's transport.
    /// - Returns: The response the stages returned, whatever its status, and its body (none for
    ///   a `HEAD` request).
    /// - Throws: ``NetworkError``: what the stages throw (a failure of `next` as
    ///   ``NetworkError/transport(_:)``); ``NetworkError/invalidURL(_:)`` when `baseURL` and the
    ///   path make no URL; ``NetworkError/encodingFailed(_:)`` when the request body cannot be
    ///   read.
    public func intercept(
      _ request: HTTPTypes.HTTPRequest,
      body: OpenAPIRuntime.HTTPBody?,
      baseURL: URL,
      operationID: String,
      next:
        @Sendable (HTTPTypes.HTTPRequest, OpenAPIRuntime.HTTPBody?, URL) async throws -> (
          HTTPTypes.HTTPResponse, OpenAPIRuntime.HTTPBody?
        )
    ) async throws(NetworkError) -> (HTTPTypes.HTTPResponse, OpenAPIRuntime.HTTPBody?) {
      let kilnRequest = try await OpenAPIExchange.kilnRequest(request, body: body, baseURL: baseURL)
      let requestContext = context(operationID)
      let chain = self.chain
      let outcome: Result<KilnNetwork.HTTPResponse, NetworkError> = await withoutActuallyEscaping(next) { next in
        // Every use of `next` goes through `calls`, which has none left running once closed.
        let calls = OpenAPINextCalls(next: next)
        let transport = OpenAPINextTransport(calls: calls, original: request, baseURL: baseURL, url: kilnRequest.url)
        let outcome: Result<KilnNetwork.HTTPResponse, NetworkError>
        do throws(NetworkError) {
          outcome = .success(
            try await chain.replacingTransport(with: transport).send(kilnRequest, context: requestContext))
        } catch {
          outcome = .failure(error)
        }
        await calls.close()
        return outcome
      }
      return try OpenAPIExchange.openAPIResponse(try outcome.get(), to: request)
    }
  }

  extension OpenAPIClientMiddleware: CountingSource {
    /// The counters of the stages: see ``RequestChain/counterReadings()``.
    public func counterReadings() -> [CounterReading] {
      chain.counterReadings()
    }
  }

  /// The transport of ``OpenAPIClientMiddleware``'s chain before a call replaces it.
  private struct UnusedTransport: Transport {
    func send(_ request: HTTPRequest, options: TransportOptions) async throws(TransportError) -> HTTPResponse {
      throw .cancelled
    }
  }
#endif
