#if OpenAPI
  import Foundation
  import HTTPTypes
  import KilnNetwork
  import KilnTesting
  import OpenAPIRuntime
  import Testing

  #if canImport(FoundationNetworking)
    import FoundationNetworking
  #endif

  private let serverURL = URL(string: "https://api.example.com/v1")!

  private let articleJSON = #"{"id":7,"title":"Seven"}"#

  /// A KilnNetwork transport that records each request and the options it came with.
  private struct RecordingTransport: Transport {
    let requests = Recorder<KilnNetwork.HTTPRequest>()
    let limits = Recorder<Int?>()
    let respond: @Sendable (KilnNetwork.HTTPRequest) -> KilnNetwork.HTTPResponse

    func send(_ request: KilnNetwork.HTTPRequest, options: TransportOptions) async throws(TransportError)
      -> KilnNetwork.HTTPResponse
    {
      requests.append(request)
      limits.append(options.maximumBodySize)
      return respond(request)
    }
  }

  /// Another OpenAPI transport: answers from a closure (given the call's number, from 1) and
  /// records each call.
  private struct FakeOpenAPITransport: ClientTransport {
    struct Call: Sendable {
      var request: HTTPTypes.HTTPRequest
      var body: Data?
      var baseURL: URL
    }

    let calls = Recorder<Call>()
    let respond:
      @Sendable (_ call: Int, HTTPTypes.HTTPRequest) async throws -> (HTTPTypes.HTTPResponse, OpenAPIRuntime.HTTPBody?)

    func send(
      _ request: HTTPTypes.HTTPRequest, body: OpenAPIRuntime.HTTPBody?, baseURL: URL, operationID: String
    ) async throws -> (HTTPTypes.HTTPResponse, OpenAPIRuntime.HTTPBody?) {
      var data: Data?
      if let body { data = try await Data(collecting: body, upTo: .max) }
      calls.append(Call(request: request, body: data, baseURL: baseURL))
      return try await respond(calls.count, request)
    }
  }

  /// An OpenAPI middleware that adds two `X-Trace` fields (the second spelled in lowercase) and
  /// records the response fields it gets back.
  private struct TracingMiddleware: ClientMiddleware {
    let responseFields = Recorder<HTTPFields>()

    func intercept(
      _ request: HTTPTypes.HTTPRequest, body: OpenAPIRuntime.HTTPBody?, baseURL: URL, operationID: String,
      next:
        @Sendable (HTTPTypes.HTTPRequest, OpenAPIRuntime.HTTPBody?, URL) async throws -> (
          HTTPTypes.HTTPResponse, OpenAPIRuntime.HTTPBody?
        )
    ) async throws -> (HTTPTypes.HTTPResponse, OpenAPIRuntime.HTTPBody?) {
      var request = request
      request.headerFields.append(HTTPField(name: HTTPField.Name("X-Trace")!, value: "1"))
      request.headerFields.append(HTTPField(name: HTTPField.Name("x-trace")!, value: "2"))
      let (response, responseBody) = try await next(request, body, baseURL)
      responseFields.append(response.headerFields)
      return (response, responseBody)
    }
  }

  /// A JSON response with repeated `Set-Cookie` fields.
  private func jsonResponse(_ json: String) -> (HTTPTypes.HTTPResponse, OpenAPIRuntime.HTTPBody?) {
    var fields = HTTPFields()
    fields.append(HTTPField(name: .contentType, value: "application/json"))
    fields.append(HTTPField(name: .setCookie, value: "a=1"))
    fields.append(HTTPField(name: HTTPField.Name("X-Total-Count")!, value: "1"))
    fields.append(HTTPField(name: .setCookie, value: "b=2"))
    return (HTTPTypes.HTTPResponse(status: .ok, headerFields: fields), OpenAPIRuntime.HTTPBody(json))
  }

  private func fieldLines(_ fields: HTTPFields) -> [String] {
    fields.map { "\($0.name.rawName): \($0.value)" }
  }

  /// The OpenAPI transport and middleware at their boundaries, without a network: what crosses
  /// them, how errors are typed, redirects, abandoned attempts and the `next` closure's lifetime.
  @Suite("OpenAPI transport and middleware", .timeLimit(.minutes(1)))
  struct OpenAPIBoundaryTests {
    // MARK: OpenAPIClientTransport

    @Test("the transport: URL from server URL and path, repeated fields in order both ways")
    func transportCarriesFields() async throws {
      let transport = RecordingTransport { _ in
        KilnNetwork.HTTPResponse(
          status: 200,
          headers: HTTPHeaders([
            ("Content-Type", "application/json"), ("Set-Cookie", "a=1"), ("X-Total-Count", "1"), ("set-cookie", "b=2"),
          ]),
          body: Data("[\(articleJSON)]".utf8))
      }
      let tracing = TracingMiddleware()
      let client = Client(
        serverURL: serverURL, transport: OpenAPIClientTransport(transport: transport), middlewares: [tracing])
      let output = try await client.listArticles(query: .init(limit: 5)).ok
      #expect(try output.body.json.map(\.id) == [7])
      #expect(output.headers.xTotalCount == 1)

      let sent = try #require(transport.requests.values.first)
      #expect(sent.url == URL(string: "https://api.example.com/v1/articles?limit=5")!)
      #expect(sent.method == .get)
      #expect(sent.body == nil)
      #expect(sent.headers.fields.map(\.description) == ["Accept: application/json", "X-Trace: 1", "x-trace: 2"])
      let received = try #require(tracing.responseFields.values.first)
      #expect(
        fieldLines(received) == [
          "Content-Type: application/json", "Set-Cookie: a=1", "X-Total-Count: 1", "set-cookie: b=2",
        ])
    }

    @Test("the transport reads a streamed request body whole; a HEAD response has no body")
    func transportBodies() async throws {
      let transport = RecordingTransport { _ in
        KilnNetwork.HTTPResponse(status: 200, headers: ["Content-Length": "3"], body: Data("abc".utf8))
      }
      let openAPI = OpenAPIClientTransport(transport: transport)
      let (stream, continuation) = AsyncStream<ArraySlice<UInt8>>.makeStream()
      continuation.yield([1, 2])
      continuation.yield([3])
      continuation.finish()
      let post = HTTPTypes.HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/upload?x=1")
      let (response, body) = try await openAPI.send(
        post, body: OpenAPIRuntime.HTTPBody(stream, length: .unknown), baseURL: serverURL, operationID: "upload")
      #expect(response.status == .ok)
      #expect(try await Data(collecting: #require(body), upTo: 100) == Data("abc".utf8))
      let sent = try #require(transport.requests.values.first)
      #expect(sent.method == .post)
      #expect(sent.url == URL(string: "https://api.example.com/v1/upload?x=1")!)
      #expect(sent.body == .data(Data([1, 2, 3])))

      let head = HTTPTypes.HTTPRequest(method: .head, scheme: nil, authority: nil, path: "/upload")
      let (headResponse, headBody) = try await openAPI.send(head, body: nil, baseURL: serverURL, operationID: "head")
      #expect(headBody == nil)
      #expect(headResponse.headerFields[.contentLength] == "3")
    }

    @Test("the transport's context comes from the operation ID")
    func contextPerOperation() async throws {
      let transport = RecordingTransport { request in
        KilnNetwork.HTTPResponse(
          status: 200, headers: ["Content-Type": "application/json"],
          body: Data((request.url.path.hasSuffix("/7") ? articleJSON : "[]").utf8))
      }
      let openAPI = OpenAPIClientTransport(chain: RequestChain(transport: transport)) { operationID in
        RequestContext(maximumBodySize: operationID == "listArticles" ? 4_096 : nil)
      }
      let client = Client(serverURL: serverURL, transport: openAPI)
      _ = try await client.listArticles()
      _ = try await client.getArticle(path: .init(id: 7))
      #expect(transport.limits.values == [4_096, nil])
    }

    @Test("a response a stage made that swift-http-types cannot hold is a typed error")
    func unrepresentableResponse() async throws {
      let transport = RecordingTransport { _ in KilnNetwork.HTTPResponse(status: 1_000) }
      let client = Client(serverURL: serverURL, transport: OpenAPIClientTransport(transport: transport))
      do {
        _ = try await client.listArticles()
        Issue.record("expected a typed error")
      } catch {
        guard case .transport(.other(let reason))? = networkError(of: error) else {
          Issue.record("expected NetworkError.transport(.other), got \(error)")
          return
        }
        #expect(reason.contains("1000"))
      }
    }

    // MARK: OpenAPIClientMiddleware

    @Test("the middleware: the stages' request reaches the next transport, repeated fields in order both ways")
    func middlewareCarriesFields() async throws {
      let inner = FakeOpenAPITransport { _, _ in jsonResponse("[\(articleJSON)]") }
      let seen = Recorder<KilnNetwork.HTTPRequest>()
      let tracing = TracingMiddleware()
      let client = Client(
        serverURL: serverURL, transport: inner,
        middlewares: [tracing, OpenAPIClientMiddleware(middleware: [Watching([RequestSpy(requests: seen)])])])
      let output = try await client.listArticles(query: .init(limit: 5)).ok
      #expect(try output.body.json.map(\.id) == [7])

      let kiln = try #require(seen.values.first)
      #expect(kiln.url == URL(string: "https://api.example.com/v1/articles?limit=5")!)
      #expect(kiln.headers.fields.map(\.description) == ["Accept: application/json", "X-Trace: 1", "x-trace: 2"])
      let call = try #require(inner.calls.values.first)
      #expect(call.baseURL == serverURL)
      #expect(call.request.path == "/articles?limit=5")
      #expect(fieldLines(call.request.headerFields) == ["Accept: application/json", "X-Trace: 1", "x-trace: 2"])
      let received = try #require(tracing.responseFields.values.first)
      #expect(
        fieldLines(received) == [
          "Content-Type: application/json", "Set-Cookie: a=1", "X-Total-Count: 1", "Set-Cookie: b=2",
        ])
    }

    @Test("the middleware types the next transport's errors: a refused connection is retried, others fail typed")
    func middlewareErrors() async throws {
      let refusedOnce = FakeOpenAPITransport { call, _ in
        if call == 1 { throw URLError(.cannotConnectToHost) }
        return jsonResponse(articleJSON)
      }
      let retrying = Retrying(NetworkHandler.RetryPolicy(maxAttempts: 2, backoff: .immediate, jitter: .none))
      let client = Client(
        serverURL: serverURL, transport: refusedOnce, middlewares: [OpenAPIClientMiddleware(middleware: [retrying])])
      #expect(try await client.getArticle(path: .init(id: 7)).ok.body.json.id == 7)
      #expect(refusedOnce.calls.count == 2)

      let cases: [(any Error, TransportError)] = [
        (URLError(.timedOut), .timedOut),
        (URLError(.cannotFindHost), .cannotFindHost),
        (CancellationError(), .cancelled),
        (TransportError.connectionLost, .connectionLost),
        (NetworkError.transport(.secureConnectionFailed), .secureConnectionFailed),
      ]
      for (thrown, expected) in cases {
        let failing = FakeOpenAPITransport { _, _ in throw thrown }
        let client = Client(
          serverURL: serverURL, transport: failing,
          middlewares: [OpenAPIClientMiddleware(middleware: [Retrying(.never)])])
        do {
          _ = try await client.getArticle(path: .init(id: 7))
          Issue.record("expected \(expected)")
        } catch {
          let network = networkError(of: error)
          if expected == .cancelled {
            #expect(network?.isCancellation == true, "\(thrown) gave \(error)")
          } else {
            guard case .transport(expected)? = network else {
              Issue.record("\(thrown): expected .transport(\(expected)), got \(error)")
              continue
            }
          }
        }
      }

      let other = FakeOpenAPITransport { _, _ in throw TestError("boom") }
      let otherClient = Client(
        serverURL: serverURL, transport: other, middlewares: [OpenAPIClientMiddleware(middleware: [])])
      do {
        _ = try await otherClient.getArticle(path: .init(id: 7))
        Issue.record("expected a typed error")
      } catch {
        guard case .transport(.other(let reason))? = networkError(of: error) else {
          Issue.record("expected .transport(.other), got \(error)")
          return
        }
        #expect(reason.contains("boom"))
      }
    }

    @Test("the middleware reads the body up to the context's limit, announced or streamed", arguments: [true, false])
    func middlewareBodyLimit(announced: Bool) async throws {
      let inner = FakeOpenAPITransport { _, _ in
        let bytes = [UInt8](repeating: 0x20, count: 4_096)
        let body: OpenAPIRuntime.HTTPBody
        if announced {
          body = OpenAPIRuntime.HTTPBody(bytes)
        } else {
          let (stream, continuation) = AsyncStream<ArraySlice<UInt8>>.makeStream()
          for start in stride(from: 0, to: bytes.count, by: 512) { continuation.yield(bytes[start..<start + 512]) }
          continuation.finish()
          body = OpenAPIRuntime.HTTPBody(stream, length: .unknown)
        }
        return (HTTPTypes.HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]), body)
      }
      let client = Client(
        serverURL: serverURL, transport: inner,
        middlewares: [OpenAPIClientMiddleware(middleware: [], context: RequestContext(maximumBodySize: 1_024))])
      do {
        _ = try await client.listArticles()
        Issue.record("expected the body limit's error")
      } catch {
        guard case .transport(.bodyTooLarge(limit: 1_024))? = networkError(of: error) else {
          Issue.record("expected .transport(.bodyTooLarge(limit: 1024)), got \(error)")
          return
        }
      }
    }

    @Test("the middleware follows a redirect through next, to another origin without the credential")
    func middlewareRedirect() async throws {
      let inner = FakeOpenAPITransport { call, request in
        guard call == 1 else { return jsonResponse(articleJSON) }
        var fields = HTTPFields()
        fields.append(HTTPField(name: .location, value: "https://mirror.example.com/v2/articles/7?from=v1"))
        return (HTTPTypes.HTTPResponse(status: .found, headerFields: fields), nil)
      }
      let credential = CredentialMiddleware()
      let client = Client(
        serverURL: serverURL, transport: inner,
        middlewares: [credential, OpenAPIClientMiddleware(middleware: [])])
      #expect(try await client.getArticle(path: .init(id: 7)).ok.body.json.id == 7)
      let calls = inner.calls.values
      #expect(calls.count == 2)
      #expect(calls[0].baseURL == serverURL)
      #expect(calls[0].request.path == "/articles/7")
      #expect(calls[0].request.headerFields[.authorization] == "Bearer secret")
      #expect(calls[1].baseURL == URL(string: "https://mirror.example.com")!)
      #expect(calls[1].request.path == "/v2/articles/7?from=v1")
      #expect(calls[1].request.headerFields[.authorization] == nil)

      let notFollowing = FakeOpenAPITransport { _, _ in
        (HTTPTypes.HTTPResponse(status: .found, headerFields: [.location: "/elsewhere"]), nil)
      }
      let client2 = Client(
        serverURL: serverURL, transport: notFollowing,
        middlewares: [OpenAPIClientMiddleware(middleware: [], context: RequestContext(redirects: .none))])
      guard case .undocumented(statusCode: 302, _) = try await client2.getArticle(path: .init(id: 7)) else {
        Issue.record("expected the 302 itself")
        return
      }
      #expect(notFollowing.calls.count == 1)
    }

    @Test("an attempt AttemptTimeout gives up on is cancelled in the next transport; the retry succeeds")
    func middlewareAbandonedAttempt() async throws {
      let gate = Gate()
      let cancelled = AsyncCounter()
      let inner = FakeOpenAPITransport { call, _ in
        if call == 1 {
          do {
            try await gate.wait()  // never opened: only cancellation ends it
          } catch {
            cancelled.increment()
            throw error
          }
        }
        return jsonResponse(articleJSON)
      }
      let clock = ManualClock()
      let middleware = OpenAPIClientMiddleware(middleware: [
        Retrying(NetworkHandler.RetryPolicy(maxAttempts: 2, backoff: .immediate, jitter: .none), clock: clock),
        AttemptTimeout(.seconds(5), clock: clock),
      ])
      let client = Client(serverURL: serverURL, transport: inner, middlewares: [middleware])
      let request = Task { try await client.getArticle(path: .init(id: 7)) }
      await gate.waitForWaiters(1)
      await clock.waitForSleepers(count: 1)  // the first attempt's limit
      clock.advance(by: .seconds(5))
      #expect(try await request.value.ok.body.json.id == 7)
      // The middleware returned only once the abandoned call had ended.
      #expect(cancelled.value == 1)
      #expect(inner.calls.count == 2)
    }

    @Test("a cancelled operation cancels the call in the next transport and ends typed")
    func middlewareCancellation() async throws {
      let gate = Gate()
      let inner = FakeOpenAPITransport { _, _ in
        try await gate.wait()
        return jsonResponse(articleJSON)
      }
      let client = Client(
        serverURL: serverURL, transport: inner, middlewares: [OpenAPIClientMiddleware(middleware: [Retrying(.default)])]
      )
      let request = Task { try await client.getArticle(path: .init(id: 7)) }
      await gate.waitForWaiters(1)
      request.cancel()
      do {
        _ = try await request.value
        Issue.record("expected a cancellation")
      } catch {
        #expect(networkError(of: error)?.isCancellation == true, "\(error)")
      }
    }
  }

  /// A watch that records each request as sent.
  private struct RequestSpy: NetworkWatch {
    let requests: Recorder<KilnNetwork.HTTPRequest>

    func willSend(_ request: KilnNetwork.HTTPRequest, attempt: Int) {
      requests.append(request)
    }
  }

  /// An OpenAPI middleware that adds a credential.
  private struct CredentialMiddleware: ClientMiddleware {
    func intercept(
      _ request: HTTPTypes.HTTPRequest, body: OpenAPIRuntime.HTTPBody?, baseURL: URL, operationID: String,
      next:
        @Sendable (HTTPTypes.HTTPRequest, OpenAPIRuntime.HTTPBody?, URL) async throws -> (
          HTTPTypes.HTTPResponse, OpenAPIRuntime.HTTPBody?
        )
    ) async throws -> (HTTPTypes.HTTPResponse, OpenAPIRuntime.HTTPBody?) {
      var request = request
      request.headerFields[.authorization] = "Bearer secret"
      return try await next(request, body, baseURL)
    }
  }
#endif
