public import Foundation
import KilnQuery

/// Sends the requests that targets describe, with retries, authentication, validation,
/// response caching and watches, through any ``Transport``.
///
/// ```swift
/// let handler = NetworkHandler(
///   transport: URLSessionTransport(),
///   storage: ResponseItemStore(MemoryCache<String, Data>()),
///   retryPolicy: .default,
///   watches: [LoggingWatch()]
/// )
///
/// let response = try await handler.request(API.feed)                    // HTTPResponse
/// let user = try await handler.request(API.user(id: 7), as: User.self)  // decoded
/// handler.request(API.user(id: 7), as: User.self) { user in … } onError: { error in … }
/// ```
///
/// Every form fails with a ``NetworkError``; the callback forms call exactly one of their two
/// closures exactly once, also when their task is cancelled before it starts.
///
/// **A request, step by step.** The target becomes an ``HTTPRequest`` (``TargetGroup/makeRequest()``).
/// In the ``ResponseMode/normal`` and ``ResponseMode/sample`` modes, with a ``storage`` and a
/// `validUntil`, a valid stored response is returned. Otherwise the request goes through the
/// ``chain``: a ``RequestChain`` of stages in front of the transport. From the settings, the
/// chain is ``Deduplicating`` (when ``deduplicatesRequests`` is on), ``HTTPCaching`` (with an
/// ``httpCache``), ``Retrying``, ``Authenticating``, ``Watching`` and ``AttemptTimeout`` (each
/// only when its setting is given); give ``init(chain:storage:responseMode:validation:maximumBodySize:redirects:decoder:now:)``
/// a chain of your own to reorder them, or to add an ``HTTPCaching`` stage or one you wrote.
/// The response's status is then validated, the response decoded, stored with `validUntil`,
/// and returned.
///
/// **Cancellation.** Cancelling the calling task cancels the request in flight, or ends a
/// retry's wait at once with no further attempt, and the request fails with
/// ``NetworkError/cancelled``.
public struct NetworkHandler: Sendable {
  /// Sends the requests.
  public let transport: any Transport
  /// Where responses are cached by storage key, or `nil` for no caching.
  public let storage: (any ResponseStore)?
  /// When failed requests are sent again.
  public let retryPolicy: RetryPolicy
  /// Where responses come from.
  public let responseMode: ResponseMode
  /// Watches told about every attempt, in order.
  public let watches: [any NetworkWatch]
  /// Adds credentials and refreshes them on rejection, or `nil`.
  public let authentication: (any RequestAuthenticating)?
  /// Which statuses are not errors.
  public let validation: StatusValidation
  /// The longest an attempt may take, on ``clock``; `nil` for no limit. An attempt that takes
  /// longer fails with ``NetworkError/timedOut(_:)``, which is retried like a transport timeout.
  public let timeout: Duration?
  /// The largest response body accepted, in bytes, or `nil`.
  public let maximumBodySize: Int?
  /// The decoder of the decoding forms when none is given.
  public let decoder: any ResponseDecoder
  /// Whether identical `GET` requests (same URL and headers, no body) made at the same time
  /// share one request on the wire — with its retries — and every caller gets its response.
  /// A caller that is cancelled leaves at once; the shared request is cancelled only when its
  /// last caller leaves. Progress is reported to the caller that started it.
  public let deduplicatesRequests: Bool
  /// The clock of retry waits and timeouts.
  public let clock: any Clock<Duration>
  /// The current date, for the response store and `Retry-After` dates.
  public let now: @Sendable () -> Date
  /// The redirects the transport follows, unless a target says otherwise
  /// (``TargetGroup/redirects``); up to 10 by default.
  public let redirects: TransportOptions.Redirects
  /// The RFC 9111 cache the chain answers from, outside retries and authentication, or `nil`.
  public let httpCache: HTTPCache?
  /// The stages every request goes through, and the transport at their end.
  public let chain: RequestChain

  /// Creates a handler whose ``chain`` is built from its settings.
  ///
  /// - Parameters:
  ///   - transport: Sends the requests.
  ///   - storage: Where responses are cached by target (Lynn's response store); none by default.
  ///   - httpCache: An RFC 9111 cache answering before retries and authentication; none by
  ///     default.
  ///   - retryPolicy: When failed requests are sent again; ``RetryPolicy/default`` by default.
  ///   - responseMode: Where responses come from; ``ResponseMode/normal`` by default.
  ///   - watches: Told about every attempt; none by default.
  ///   - authentication: Adds and refreshes credentials; none by default.
  ///   - validation: Which statuses are not errors; 2xx by default.
  ///   - timeout: The longest an attempt may take; no limit by default.
  ///   - maximumBodySize: The largest response body accepted, in bytes; no limit by default.
  ///   - redirects: The redirects the transport follows; up to 10 by default.
  ///   - decoder: The default decoder; a plain `JSONDecoder` by default.
  ///   - deduplicatesRequests: Whether identical concurrent `GET`s share one request; `false`
  ///     by default.
  ///   - clock: The clock of waits and timeouts; the continuous clock by default.
  ///   - now: The current date; by default the clock's own (`dateProvider(for: clock)`), so
  ///     that a test advancing a `ManualClock` moves both.
  public init(
    transport: any Transport,
    storage: (any ResponseStore)? = nil,
    httpCache: HTTPCache? = nil,
    retryPolicy: RetryPolicy = .default,
    responseMode: ResponseMode = .normal,
    watches: [any NetworkWatch] = [],
    authentication: (any RequestAuthenticating)? = nil,
    validation: StatusValidation = .successful,
    timeout: Duration? = nil,
    maximumBodySize: Int? = nil,
    redirects: TransportOptions.Redirects = .follow(limit: 10),
    decoder: any ResponseDecoder = JSONDecoder(),
    deduplicatesRequests: Bool = false,
    clock: any Clock<Duration> = ContinuousClock(),
    now: (@Sendable () -> Date)? = nil
  ) {
    let now = now ?? dateProvider(for: clock)
    self.transport = transport
    self.storage = storage
    self.httpCache = httpCache
    self.retryPolicy = retryPolicy
    self.responseMode = responseMode
    self.watches = watches
    self.authentication = authentication
    self.validation = validation
    self.timeout = timeout
    self.maximumBodySize = maximumBodySize
    self.redirects = redirects
    self.decoder = decoder
    self.deduplicatesRequests = deduplicatesRequests
    self.clock = clock
    self.now = now
    var middleware: [any RequestMiddleware] = []
    if deduplicatesRequests { middleware.append(Deduplicating()) }
    if let httpCache { middleware.append(HTTPCaching(httpCache)) }
    middleware.append(Retrying(retryPolicy, clock: clock, now: now))
    if let authentication { middleware.append(Authenticating(authentication)) }
    if !watches.isEmpty { middleware.append(Watching(watches)) }
    if let timeout { middleware.append(AttemptTimeout(timeout, clock: clock)) }
    self.chain = RequestChain(transport: transport, middleware: middleware)
  }

  /// Creates a handler that sends every request through `chain`.
  ///
  /// ```swift
  /// let handler = NetworkHandler(
  ///   chain: RequestChain(
  ///     transport: URLSessionTransport(),
  ///     middleware: [HTTPCaching(cache), Retrying(.default), Authenticating(interceptor)]
  ///   )
  /// )
  /// ```
  ///
  /// The settings that describe a chain (``httpCache``, ``retryPolicy``, ``watches``,
  /// ``authentication``, ``timeout``, ``deduplicatesRequests``) then read as "none": the
  /// chain's stages decide.
  ///
  /// - Parameters:
  ///   - chain: The stages and the transport.
  ///   - storage: Where responses are stored by target; none by default.
  ///   - responseMode: Where responses come from; ``ResponseMode/normal`` by default.
  ///   - validation: Which statuses are not errors; 2xx by default.
  ///   - maximumBodySize: The largest response body accepted, in bytes; no limit by default.
  ///   - redirects: The redirects the transport follows; up to 10 by default.
  ///   - decoder: The default decoder; a plain `JSONDecoder` by default.
  ///   - now: The current date, for the response store; `Date.init` by default.
  public init(
    chain: RequestChain,
    storage: (any ResponseStore)? = nil,
    responseMode: ResponseMode = .normal,
    validation: StatusValidation = .successful,
    maximumBodySize: Int? = nil,
    redirects: TransportOptions.Redirects = .follow(limit: 10),
    decoder: any ResponseDecoder = JSONDecoder(),
    now: @escaping @Sendable () -> Date = Date.init
  ) {
    self.transport = chain.transport
    self.storage = storage
    self.httpCache = nil
    self.retryPolicy = .never
    self.responseMode = responseMode
    self.watches = []
    self.authentication = nil
    self.validation = validation
    self.timeout = nil
    self.maximumBodySize = maximumBodySize
    self.redirects = redirects
    self.decoder = decoder
    self.deduplicatesRequests = false
    self.clock = ContinuousClock()
    self.now = now
    self.chain = chain
  }

  /// The single flights of the chain's ``Deduplicating`` stage; empty ones when it has none.
  var flights: SharedLoads<HTTPRequest> {
    chain.first(Deduplicating.self)?.flights ?? SharedLoads()
  }

  // MARK: - Requests

  /// Sends the target's request and returns the response.
  ///
  /// - Parameters:
  ///   - target: The endpoint.
  ///   - validUntil: Until when the response's body may be served from ``storage``; `nil`
  ///     (the default) neither reads nor writes the cache.
  ///   - progress: Told as the body arrives, per attempt.
  /// - Returns: The response, its status acceptable to ``validation``.
  /// - Throws: ``NetworkError``.
  public func request(
    _ target: some TargetGroup,
    validUntil: (@Sendable (Data) -> Date)? = nil,
    progress: (@Sendable (DownloadProgress) -> Void)? = nil
  ) async throws(NetworkError) -> HTTPResponse {
    try await perform(
      target,
      progress: progress,
      transform: { response throws(NetworkError) in response },
      validUntil: validUntil.map { validUntil in { response in validUntil(response.body) } }
    )
  }

  /// Sends the target's request and decodes the response body.
  ///
  /// - Parameters:
  ///   - target: The endpoint.
  ///   - type: The model type.
  ///   - decoder: The decoder; the handler's ``decoder`` by default.
  ///   - validUntil: Until when the response may be served from ``storage``, given the model;
  ///     `nil` (the default) neither reads nor writes the cache.
  ///   - progress: Told as the body arrives, per attempt.
  /// - Returns: The model.
  /// - Throws: ``NetworkError``; ``NetworkError/decoding(_:_:)`` with the `DecodingError` and the
  ///   response when the body does not decode.
  public func request<Model: Decodable & Sendable>(
    _ target: some TargetGroup,
    as type: Model.Type,
    decoder: (any ResponseDecoder)? = nil,
    validUntil: (@Sendable (Model) -> Date)? = nil,
    progress: (@Sendable (DownloadProgress) -> Void)? = nil
  ) async throws(NetworkError) -> Model {
    let decoder = decoder ?? self.decoder
    return try await perform(
      target,
      progress: progress,
      transform: { response throws(NetworkError) in try Self.decode(type, from: response, with: decoder) },
      validUntil: validUntil
    )
  }

  /// Sends the target's request and decodes the response body with a `JSONDecoder` using
  /// `keyDecodingStrategy`.
  ///
  /// ```swift
  /// let user = try await handler.request(API.me, as: User.self, keyDecodingStrategy: .convertFromSnakeCase)
  /// ```
  ///
  /// - Parameters:
  ///   - target: The endpoint.
  ///   - type: The model type.
  ///   - keyDecodingStrategy: How JSON keys map to the model's properties.
  ///   - validUntil: Until when the response may be served from ``storage``.
  /// - Returns: The model.
  /// - Throws: ``NetworkError``.
  public func request<Model: Decodable & Sendable>(
    _ target: some TargetGroup,
    as type: Model.Type,
    keyDecodingStrategy: JSONDecoder.KeyDecodingStrategy,
    validUntil: (@Sendable (Model) -> Date)? = nil
  ) async throws(NetworkError) -> Model {
    let decoder = JSONDecoder()
    decoder.keyDecodingStrategy = keyDecodingStrategy
    return try await request(target, as: type, decoder: decoder, validUntil: validUntil)
  }

  // MARK: - The pipeline

  static func decode<Model: Decodable>(
    _ type: Model.Type,
    from response: HTTPResponse,
    with decoder: any ResponseDecoder
  ) throws(NetworkError) -> Model {
    do {
      return try decoder.decode(type, from: response.body)
    } catch let error as DecodingError {
      throw .decoding(error, response)
    } catch {
      throw .decoding(
        .dataCorrupted(.init(codingPath: [], debugDescription: "\(error)", underlyingError: error)),
        response
      )
    }
  }

  /// The response store, the sample or the chain, in the order the response mode says.
  func perform<Output: Sendable>(
    _ target: some TargetGroup,
    progress: (@Sendable (DownloadProgress) -> Void)?,
    transform: (HTTPResponse) throws(NetworkError) -> Output,
    validUntil: ((Output) -> Date)?
  ) async throws(NetworkError) -> Output {
    guard !Task.isCancelled else { throw .cancelled }
    if responseMode == .alwaysFail { throw .simulatedFailure }
    let request = try target.makeRequest()

    let store = validUntil == nil ? nil : storage
    // Only when a store is used: the default key builds the URL a second time.
    let key = store == nil ? "" : target.storageKey
    if let store, responseMode != .alwaysLive {
      if let cached = try? await store.response(forKey: key, now: now()) {
        do throws(NetworkError) {
          return try transform(cached)
        } catch {
          // A stored response that no longer decodes is as good as corrupt.
          try? await store.removeResponses(forKey: key)
        }
      }
    }

    let response: HTTPResponse
    if responseMode == .sample {
      guard let sample = target.sampleData else { throw .noSampleData }
      response = HTTPResponse(status: 200, body: sample, url: request.url)
    } else {
      response = try await send(request, target: target, progress: progress)
    }
    let output = try transform(response)
    if let store, let validUntil {
      try? await store.save(response, forKey: key, validUntil: validUntil(output), now: now())
    }
    return output
  }

  /// The request sent through the ``chain``, its status validated.
  func send(
    _ request: HTTPRequest,
    target: some TargetGroup,
    progress: (@Sendable (DownloadProgress) -> Void)?
  ) async throws(NetworkError) -> HTTPResponse {
    let context = RequestContext(
      target: target, maximumBodySize: maximumBodySize, redirects: target.redirects ?? redirects, progress: progress)
    let response = try await chain.send(request, context: context)
    guard validation.accepts(response.status) else { throw .status(response) }
    return response
  }
}
