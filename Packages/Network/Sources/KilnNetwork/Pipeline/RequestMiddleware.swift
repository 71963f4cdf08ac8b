import _KilnSynchronization

/// One stage of a request pipeline: it sees each request on its way to the transport and the
/// response, or the error, on its way back.
///
/// A stage is a value that wraps the rest of the chain, ``RequestNext``: it may change the
/// request, answer without calling the rest (a cache hit), call it several times (retries), or
/// bound it (a timeout). Kiln's own stages are ``Deduplicating``, ``HTTPCaching``,
/// ``Retrying``, ``Authenticating``, ``Watching`` and ``AttemptTimeout``; write your own the same
/// way:
///
/// ```swift
/// struct Signing: RequestMiddleware {
///   let key: SigningKey
///
///   func send(
///     _ request: HTTPRequest, context: RequestContext, next: RequestNext
///   ) async throws(NetworkError) -> HTTPResponse {
///     var request = request
///     request.headers["Signature"] = key.signature(of: request)
///     return try await next.send(request, context: context)
///   }
/// }
///
/// let chain = RequestChain(
///   transport: URLSessionTransport(),
///   middleware: [Retrying(.default), Signing(key: key)]
/// )
/// ```
///
/// A response of any status is a response, not an error: a stage throws only when no response
/// can be given (``NetworkError/transport(_:)``, ``NetworkError/timedOut(_:)``,
/// ``NetworkError/authentication(_:)``, ``NetworkError/cancelled``). ``NetworkHandler``
/// validates the status at the end.
public protocol RequestMiddleware: Sendable {
  /// Handles one request, usually by calling `next` with it.
  ///
  /// - Parameters:
  ///   - request: The request, as the stages before this one left it.
  ///   - context: What the chain knows about the request besides its bytes.
  ///   - next: The rest of the chain, down to the transport.
  /// - Returns: The response, whatever its status.
  /// - Throws: ``NetworkError`` when there is no response to give.
  func send(_ request: HTTPRequest, context: RequestContext, next: RequestNext) async throws(NetworkError)
    -> HTTPResponse
}

/// What a request pipeline knows about one request besides its bytes.
///
/// The stages read it and may pass a changed copy down: ``Retrying`` numbers the attempts.
public struct RequestContext: Sendable {
  /// The target the request was built from, when it came from a ``NetworkHandler``; the
  /// ``Watching`` stage hands it to ``NetworkWatch/prepare(_:for:)``.
  public var target: (any TargetGroup)?

  /// The number of the attempt, from 1; set by ``Retrying``.
  public var attempt: Int

  /// The largest response body accepted, in bytes, or `nil`.
  public var maximumBodySize: Int?

  /// Which redirects the transport follows by itself.
  public var redirects: TransportOptions.Redirects

  /// Told as the body of each attempt arrives.
  public var progress: (@Sendable (DownloadProgress) -> Void)?

  /// The counters of the chain the request goes through, set by ``RequestChain/send(_:context:)``;
  /// Kiln's stages count into them.
  var counters: RequestCounters?

  /// Creates a context.
  ///
  /// - Parameters:
  ///   - target: The target the request was built from, if any.
  ///   - attempt: The number of the attempt; 1 by default.
  ///   - maximumBodySize: The largest response body accepted; no limit by default.
  ///   - redirects: The redirects followed; up to 10 by default.
  ///   - progress: Told as the body arrives; nothing by default.
  public init(
    target: (any TargetGroup)? = nil,
    attempt: Int = 1,
    maximumBodySize: Int? = nil,
    redirects: TransportOptions.Redirects = .follow(limit: 10),
    progress: (@Sendable (DownloadProgress) -> Void)? = nil
  ) {
    self.target = target
    self.attempt = attempt
    self.maximumBodySize = maximumBodySize
    self.redirects = redirects
    self.progress = progress
  }

  /// The transport options of the current attempt.
  var transportOptions: TransportOptions {
    var onProgress: (@Sendable (Int64, Int64?) -> Void)?
    if let progress {
      let reporter = ProgressReporter(attempt: attempt, report: progress)
      onProgress = { received, expected in reporter(received, expected) }
    }
    return TransportOptions(maximumBodySize: maximumBodySize, redirects: redirects, onProgress: onProgress)
  }
}

/// The rest of a request chain, as a stage sees it: the stages after it, then the transport.
public struct RequestNext: Sendable {
  let middleware: ArraySlice<any RequestMiddleware>
  let transport: any Transport

  /// Sends `request` through the rest of the chain.
  ///
  /// - Parameters:
  ///   - request: The request.
  ///   - context: The request's context, changed or not.
  /// - Returns: The response, whatever its status.
  /// - Throws: ``NetworkError`` when there is no response.
  public func send(_ request: HTTPRequest, context: RequestContext) async throws(NetworkError) -> HTTPResponse {
    guard let stage = middleware.first else {
      guard let counters = context.counters else {
        return try await Self.transmit(request, options: context.transportOptions, through: transport)
      }
      counters.add(.attempts)
      let response = try await Self.transmit(request, options: context.transportOptions, through: transport)
      counters.add(.receivedBytes, response.body.count)
      return response
    }
    return try await stage.send(
      request, context: context, next: RequestNext(middleware: middleware.dropFirst(), transport: transport))
  }

  static func transmit(
    _ request: HTTPRequest, options: TransportOptions, through transport: any Transport
  ) async throws(NetworkError) -> HTTPResponse {
    do {
      return try await transport.send(request, options: options)
    } catch .cancelled {
      throw .cancelled
    } catch {
      throw .transport(error)
    }
  }
}

/// A transport behind a list of stages, outermost first: Kiln's request pipeline.
///
/// ```swift
/// let cache = HTTPCache(store: MemoryCache<String, Data>(countLimit: 1_000, entryLifetime: nil))
/// let chain = RequestChain(
///   transport: URLSessionTransport(),
///   middleware: [
///     Deduplicating(),                  // identical GETs in flight share everything below
///     HTTPCaching(cache),               // a fresh hit returns here
///     Retrying(.default),               // each retry goes through the stages below again
///     Authenticating(interceptor),      // so each attempt gets the current credential
///     Watching([LoggingWatch()]),       // sees each attempt as sent, credential included
///     AttemptTimeout(.seconds(10)),     // bounds one attempt, not the retries
///   ]
/// )
/// let handler = NetworkHandler(chain: chain)
/// ```
///
/// The order above is the one ``NetworkHandler`` builds from its settings, and the one to
/// start from; "Composing a request pipeline" in the documentation says why each stage sits
/// where it does.
public struct RequestChain: Sendable {
  /// The transport at the end of the chain.
  public let transport: any Transport

  /// The stages, outermost (first to see a request) first.
  public let middleware: [any RequestMiddleware]

  /// The chain's counters, shared by its copies and by ``replacingTransport(with:)``.
  let counters: RequestCounters

  /// What the chain did since it was created: requests, outcomes, attempts, retries,
  /// refreshes, timeouts. Reading it costs a few atomic loads.
  public var statistics: RequestStatistics {
    RequestStatistics(counters)
  }

  /// Creates a chain.
  ///
  /// - Parameters:
  ///   - transport: The transport at the end.
  ///   - middleware: The stages, outermost first; none by default.
  public init(transport: any Transport, middleware: [any RequestMiddleware] = []) {
    self.init(transport: transport, middleware: middleware, counters: RequestCounters())
  }

  private init(transport: any Transport, middleware: [any RequestMiddleware], counters: RequestCounters) {
    self.transport = transport
    self.middleware = middleware
    self.counters = counters
  }

  /// Sends `request` through every stage and the transport.
  ///
  /// - Parameters:
  ///   - request: The request.
  ///   - context: What the stages know about it; a plain context by default.
  /// - Returns: The response, whatever its status.
  /// - Throws: ``NetworkError`` when there is no response.
  public func send(_ request: HTTPRequest, context: RequestContext = RequestContext()) async throws(NetworkError)
    -> HTTPResponse
  {
    var context = context
    context.counters = counters
    counters.add(.requests)
    counters.add(.inFlight)
    defer { counters.subtract(.inFlight) }
    do {
      let response = try await RequestNext(middleware: middleware[...], transport: transport)
        .send(request, context: context)
      counters.add(.statusClass(response.status))
      return response
    } catch {
      counters.add(.failure(error))
      throw error
    }
  }

  /// The same stages in front of another transport.
  ///
  /// - Parameter transport: The new transport.
  /// - Returns: A chain with this chain's stages and `transport`.
  public func replacingTransport(with transport: any Transport) -> RequestChain {
    RequestChain(transport: transport, middleware: middleware, counters: counters)
  }

  /// The first stage of type `Stage`, if the chain has one.
  ///
  /// - Parameter type: The stage's type.
  public func first<Stage: RequestMiddleware>(_ type: Stage.Type) -> Stage? {
    for stage in middleware {
      if let stage = stage as? Stage { return stage }
    }
    return nil
  }
}
