#if OpenAPI
  import Foundation
  import HTTPTypes
  import OpenAPIRuntime
  import _KilnSynchronization

  /// The `next` closure of one ``OpenAPIClientMiddleware/intercept(_:body:baseURL:operationID:next:)``
  /// call, callable from any task while the call lasts.
  ///
  /// `next` is not escaping: it may be called only until `intercept` returns. The stages may
  /// call it from tasks of their own (the attempt that ``AttemptTimeout`` abandons, the
  /// revalidation ``HTTPCaching`` runs in the background), which can outlive `intercept`. So each
  /// call runs in a task this object keeps; ``close()`` refuses new calls, cancels the running
  /// ones and waits for them to end, after which nothing refers to `next` any more.
  final class OpenAPINextCalls: Sendable {
    typealias Next =
      @Sendable (HTTPTypes.HTTPRequest, OpenAPIRuntime.HTTPBody?, URL) async throws -> (
        HTTPTypes.HTTPResponse, OpenAPIRuntime.HTTPBody?
      )
    typealias Outcome = (HTTPTypes.HTTPResponse, OpenAPIRuntime.HTTPBody?)

    private struct State {
      /// `nil` once closed.
      var next: Next?
      var running: [Int: Task<Outcome, any Error>] = [:]
      var nextID = 0
    }

    private let state: KilnMutex<State>

    /// Creates the calls of `next`, which must not be used after ``close()`` returns.
    init(next: @escaping Next) {
      state = KilnMutex(State(next: next))
    }

    /// Calls `next` in a task of its own, which is cancelled when the calling task is.
    ///
    /// - Throws: ``TransportError/cancelled`` when ``close()`` was called (the `intercept` call
    ///   has ended) or the calling task is cancelled; what `next` throws, as a transport error.
    func call(
      _ request: HTTPTypes.HTTPRequest, body: OpenAPIRuntime.HTTPBody?, baseURL: URL
    ) async throws(TransportError) -> Outcome {
      let started: (id: Int, task: Task<Outcome, any Error>)? = state.withLock { state in
        guard state.next != nil else { return nil }
        let id = state.nextID
        state.nextID += 1
        let task = Task { try await self.invoke(request, body: body, baseURL: baseURL) }
        state.running[id] = task
        return (id, task)
      }
      guard let started else { throw .cancelled }
      let task = started.task
      defer { state.withLock { _ = $0.running.removeValue(forKey: started.id) } }
      do {
        return try await withTaskCancellationHandler {
          try await task.value
        } onCancel: {
          task.cancel()
        }
      } catch {
        throw OpenAPIExchange.transportError(error)
      }
    }

    /// Refuses new calls, cancels the running ones and waits until they have ended.
    func close() async {
      let running = state.withLock { state in
        state.next = nil
        return Array(state.running.values)
      }
      for task in running { task.cancel() }
      for task in running { _ = await task.result }
    }

    private func invoke(
      _ request: HTTPTypes.HTTPRequest, body: OpenAPIRuntime.HTTPBody?, baseURL: URL
    ) async throws -> Outcome {
      guard let next = state.withLock({ $0.next }) else { throw CancellationError() }
      return try await next(request, body, baseURL)
    }
  }

  /// The transport at the end of the chain an ``OpenAPIClientMiddleware`` runs: it sends each
  /// attempt through the middleware's `next` (the OpenAPI middleware and transport after it).
  ///
  /// It keeps the promises of a ``Transport``: it follows redirects as
  /// ``TransportOptions/redirects`` allows (when `next` returns them), reads the body up to
  /// ``TransportOptions/maximumBodySize`` as it streams in, reports progress, and ends with
  /// ``TransportError/cancelled`` when the calling task is cancelled.
  struct OpenAPINextTransport: Transport {
    let calls: OpenAPINextCalls
    /// The request the middleware was given, sent again as it is but for the method and fields
    /// while the stages keep its URL.
    let original: HTTPTypes.HTTPRequest
    /// The server URL the middleware was given.
    let baseURL: URL
    /// The URL of the KilnNetwork request made of `original` and `baseURL`.
    let url: URL

    func send(_ request: KilnNetwork.HTTPRequest, options: TransportOptions) async throws(TransportError)
      -> KilnNetwork.HTTPResponse
    {
      try await RedirectPolicy.send(request, options: options) { (request) throws(TransportError) in
        try await exchange(request, options: options)
      }
    }

    /// Sends one request through `next` and reads its response, following no redirect.
    private func exchange(_ request: KilnNetwork.HTTPRequest, options: TransportOptions) async throws(TransportError)
      -> KilnNetwork.HTTPResponse
    {
      let (outgoing, baseURL) = try openAPIRequest(for: request)
      let body: OpenAPIRuntime.HTTPBody?
      switch request.body {
      case nil:
        body = nil
      case .data(let data):
        body = OpenAPIRuntime.HTTPBody(data)
      case .file(let file):
        do {
          body = OpenAPIRuntime.HTTPBody(try Data(contentsOf: file))
        } catch {
          throw .invalidRequest("The body file cannot be read: \(file.path): \(error)")
        }
      }
      if Task.isCancelled { throw .cancelled }
      let (response, responseBody) = try await calls.call(outgoing, body: body, baseURL: baseURL)
      let headers = HTTPHeaders(response.headerFields)
      let follows = RedirectPolicy.follows(status: response.status.code, headers: headers, redirects: options.redirects)
      var received = BodyAccumulator(limit: options.maximumBodySize, reportsProgress: !follows)
      if let responseBody {
        let length: Int64? =
          if case .known(let length) = responseBody.length {
            length
          } else {
            headers.first("Content-Length").flatMap { Int64($0) }
          }
        if let error = received.expect(contentLength: length) { throw error }
        do {
          for try await chunk in responseBody {
            if let error = received.append(chunk) { throw error }
            if let (bytes, expected) = received.progress() {
              options.onProgress?(bytes, expected)
            }
          }
        } catch let error as TransportError {
          throw error
        } catch {
          throw OpenAPIExchange.transportError(error)
        }
      }
      if Task.isCancelled { throw .cancelled }
      return KilnNetwork.HTTPResponse(response, body: received.body, url: request.url)
    }

    /// The OpenAPI request and server URL for `request`: the original request with the
    /// method and header fields the stages left, and its own path when they changed the URL.
    private func openAPIRequest(for request: KilnNetwork.HTTPRequest) throws(TransportError) -> (
      HTTPTypes.HTTPRequest, URL
    ) {
      guard let method = HTTPTypes.HTTPRequest.Method(request.method.rawValue) else {
        throw .invalidRequest(HTTPTypesConversionError.invalidMethod(request.method.rawValue).description)
      }
      var outgoing = original
      outgoing.method = method
      do {
        outgoing.headerFields = try HTTPFields(request.headers)
      } catch {
        throw .invalidRequest(error.description)
      }
      if request.url == url { return (outgoing, baseURL) }
      // A redirect, or a stage that changed the URL: its origin is the server URL.
      guard let (baseURL, path) = OpenAPIExchange.split(request.url) else {
        throw .invalidRequest("Not an absolute URL: \(request.url.absoluteString)")
      }
      outgoing.path = path
      return (outgoing, baseURL)
    }
  }
#endif
