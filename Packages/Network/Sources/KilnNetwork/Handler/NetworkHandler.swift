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
/// `validUntil`, a valid cached response is returned. Otherwise each attempt runs the
/// ``watches``' `prepare`, adds the credential, tells the watches, sends with the
/// ``timeout``, tells the watches, and validates the status. A rejected credential is
/// refreshed and the request sent once more; a retryable failure waits (on ``clock``) and
/// tries again as ``retryPolicy`` allows. A successful response is decoded, cached with
/// `validUntil`, and returned.
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
  /// The current date, for the response cache and `Retry-After` dates.
  public let now: @Sendable () -> Date

  let flights = SharedLoads<HTTPRequest>()

  /// Creates a handler.
  ///
  /// - Parameters:
  ///   - transport: Sends the requests.
  ///   - storage: Where responses are cached; none by default.
  ///   - retryPolicy: When failed requests are sent again; ``RetryPolicy/default`` by default.
  ///   - responseMode: Where responses come from; ``ResponseMode/normal`` by default.
  ///   - watches: Told about every attempt; none by default.
  ///   - authentication: Adds and refreshes credentials; none by default.
  ///   - validation: Which statuses are not errors; 2xx by default.
  ///   - timeout: The longest an attempt may take; no limit by default.
  ///   - maximumBodySize: The largest response body accepted, in bytes; no limit by default.
  ///   - decoder: The default decoder; a plain `JSONDecoder` by default.
  ///   - deduplicatesRequests: Whether identical concurrent `GET`s share one request; `false`
  ///     by default.
  ///   - clock: The clock of waits and timeouts; the continuous clock by default.
  ///   - now: The current date; `Date.init` by default.
  public init(
    transport: any Transport,
    storage: (any ResponseStore)? = nil,
    retryPolicy: RetryPolicy = .default,
    responseMode: ResponseMode = .normal,
    watches: [any NetworkWatch] = [],
    authentication: (any RequestAuthenticating)? = nil,
    validation: StatusValidation = .successful,
    timeout: Duration? = nil,
    maximumBodySize: Int? = nil,
    decoder: any ResponseDecoder = JSONDecoder(),
    deduplicatesRequests: Bool = false,
    clock: any Clock<Duration> = ContinuousClock(),
    now: @escaping @Sendable () -> Date = Date.init
  ) {
    self.transport = transport
    self.storage = storage
    self.retryPolicy = retryPolicy
    self.responseMode = responseMode
    self.watches = watches
    self.authentication = authentication
    self.validation = validation
    self.timeout = timeout
    self.maximumBodySize = maximumBodySize
    self.decoder = decoder
    self.deduplicatesRequests = deduplicatesRequests
    self.clock = clock
    self.now = now
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

  /// The cache, the sample or the network, in the order the response mode says.
  func perform<Output: Sendable>(
    _ target: some TargetGroup,
    progress: (@Sendable (DownloadProgress) -> Void)?,
    transform: (HTTPResponse) throws(NetworkError) -> Output,
    validUntil: ((Output) -> Date)?
  ) async throws(NetworkError) -> Output {
    guard !Task.isCancelled else { throw .cancelled }
    try retryPolicy.validate()
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
      response = try await live(request, target: target, progress: progress)
    }
    let output = try transform(response)
    if let store, let validUntil {
      try? await store.save(response, forKey: key, validUntil: validUntil(output), now: now())
    }
    return output
  }

  /// The request sent over the network, shared with identical `GET`s in flight when
  /// ``deduplicatesRequests`` is on.
  func live(
    _ request: HTTPRequest,
    target: some TargetGroup,
    progress: (@Sendable (DownloadProgress) -> Void)?
  ) async throws(NetworkError) -> HTTPResponse {
    guard deduplicatesRequests, request.method == .get, request.body == nil else {
      return try await send(request, target: target, progress: progress)
    }
    // Shared as `any Error`, so that a cancelled caller leaves at once; the flight is
    // cancelled only when its last caller leaves.
    let shared = AnyQuery<HTTPResponse, any Error> { () async throws -> HTTPResponse in
      try await self.send(request, target: target, progress: progress)
    }
    do {
      return try await flights.load(request, using: shared)
    } catch let error as NetworkError {
      throw error
    } catch {
      throw .cancelled
    }
  }

  /// Every attempt of one request: watches, credentials, timeout, validation, refresh and
  /// retries.
  func send(
    _ request: HTTPRequest,
    target: some TargetGroup,
    progress: (@Sendable (DownloadProgress) -> Void)?
  ) async throws(NetworkError) -> HTTPResponse {
    var attempt = 0
    var retry = 1
    var refreshedCredential = false
    while true {
      attempt += 1
      guard !Task.isCancelled else { throw .cancelled }
      var sent = request
      for watch in watches { sent = watch.prepare(sent, for: target) }
      let generation = try await authentication?.authenticate(&sent)
      for watch in watches { watch.willSend(sent, attempt: attempt) }

      let result = await transmit(sent, attempt: attempt, progress: progress)
      for watch in watches { watch.didReceive(result, for: sent, attempt: attempt) }

      let error: NetworkError
      switch result {
      case .success(let response) where validation.accepts(response.status):
        retryPolicy.budget?.recordSuccess()
        return response
      case .success(let response):
        error = .status(response)
      case .failure(let failure):
        error = failure
      }
      if error.isCancellation { throw .cancelled }

      if let authentication, let generation, !refreshedCredential, let response = error.response,
        authentication.isRejection(response, for: sent)
      {
        refreshedCredential = true
        try await authentication.refresh(rejectedGeneration: generation)
        continue
      }

      guard retryPolicy.allowsRetry(of: sent, after: error, attempt: retry),
        retryPolicy.budget?.withdraw() ?? true
      else { throw error }
      let delay = retryPolicy.delay(after: error, attempt: retry, now: now())
      do {
        try await clock.sleep(for: delay)
      } catch {
        throw .cancelled
      }
      retry += 1
    }
  }

  /// One attempt on the wire, within ``timeout``.
  func transmit(
    _ request: HTTPRequest,
    attempt: Int,
    progress: (@Sendable (DownloadProgress) -> Void)?
  ) async -> Result<HTTPResponse, NetworkError> {
    var onProgress: (@Sendable (Int64, Int64?) -> Void)?
    if let progress {
      let reporter = ProgressReporter(attempt: attempt, report: progress)
      onProgress = { received, expected in reporter(received, expected) }
    }
    let options = TransportOptions(maximumBodySize: maximumBodySize, onProgress: onProgress)
    let transport = self.transport
    guard let timeout else {
      return await Self.transmit(request, options: options, through: transport)
    }
    let clock = self.clock
    return await withTaskGroup(of: Result<HTTPResponse, NetworkError>?.self) { group in
      group.addTask {
        await Self.transmit(request, options: options, through: transport)
      }
      group.addTask {
        do {
          try await clock.sleep(for: timeout)
          return .failure(.timedOut(timeout))
        } catch {
          return nil
        }
      }
      var outcome: Result<HTTPResponse, NetworkError> = .failure(.cancelled)
      while let next = await group.next() {
        if let next {
          outcome = next
          break
        }
      }
      group.cancelAll()
      return outcome
    }
  }

  private static func transmit(
    _ request: HTTPRequest,
    options: TransportOptions,
    through transport: any Transport
  ) async -> Result<HTTPResponse, NetworkError> {
    do {
      return .success(try await transport.send(request, options: options))
    } catch .cancelled {
      return .failure(.cancelled)
    } catch {
      return .failure(.transport(error))
    }
  }
}
