import Foundation
import KilnNetwork
import KilnQuery
import KilnTesting
import Testing

@Suite("NetworkHandler", .timeLimit(.minutes(1)))
struct NetworkHandlerTests {
  @Test("a raw request sends the target's request and returns the response")
  func raw() async throws {
    let transport = StubTransport(replies: [.item(1)])
    let response = try await makeHandler(transport).request(TestAPI.search(["q": "a b"]))
    #expect(response.status == 200)
    #expect(transport.requests.map(\.url.absoluteString) == ["https://api.example.com/v1/search?q=a%20b"])
    #expect(transport.requests.first?.method == .get)
  }

  @Test("the storage key is read only when a response store is used")
  func storageKeyOnlyWithAStore() async throws {
    struct Counted: TargetGroup {
      let reads: Recorder<String>
      var baseURL: URL { URL(string: "https://api.example.com")! }
      var path: String { "items/1" }
      var storageKey: String {
        reads.append("read")
        return "items/1"
      }
    }
    let target = Counted(reads: Recorder())
    let validFor60s: @Sendable (Data) -> Date = { _ in Date().addingTimeInterval(60) }

    _ = try await makeHandler(StubTransport(replies: [.item(1)])).request(target, validUntil: validFor60s)
    _ = try await makeHandler(StubTransport(replies: [.item(1)]), storage: ResponseItemStore(MemoryStoreForKeys()))
      .request(target)
    #expect(target.reads.count == 0, "no store, or no validUntil: the key is never needed")

    _ = try await makeHandler(StubTransport(replies: [.item(1)]), storage: ResponseItemStore(MemoryStoreForKeys()))
      .request(target, validUntil: validFor60s)
    #expect(target.reads.count == 1)
  }

  @Test("a decoded request decodes the body")
  func decoded() async throws {
    let transport = StubTransport(replies: [.item(7, name: "tea")])
    #expect(try await makeHandler(transport).request(TestAPI.item(id: 7), as: Item.self) == Item(id: 7, name: "tea"))
  }

  @Test("the key decoding strategy and a custom decoder are used")
  func decoders() async throws {
    struct Snake: Decodable, Sendable, Equatable { var itemName: String }
    let transport = StubTransport(replies: [.json(#"{"item_name": "tea"}"#)])
    let handler = makeHandler(transport)
    #expect(
      try await handler.request(TestAPI.item(id: 1), as: Snake.self, keyDecodingStrategy: .convertFromSnakeCase)
        == Snake(itemName: "tea"))

    struct Reversed: ResponseDecoder {
      func decode<Model: Decodable>(_ type: Model.Type, from data: Data) throws -> Model {
        try JSONDecoder().decode(type, from: Data(String(String(decoding: data, as: UTF8.self).reversed()).utf8))
      }
    }
    let reversed = StubTransport(replies: [.json(String(#"{"id": 3, "name": "x"}"#.reversed()))])
    #expect(
      try await makeHandler(reversed).request(TestAPI.item(id: 3), as: Item.self, decoder: Reversed())
        == Item(id: 3, name: "x"))
  }

  @Test("malformed JSON is a decoding error carrying the DecodingError and the response")
  func malformedJSON() async {
    let transport = StubTransport(replies: [.json(#"{"id": 1, "name": "#)])
    await #expect {
      try await makeHandler(transport).request(TestAPI.item(id: 1), as: Item.self)
    } throws: { error in
      guard case NetworkError.decoding(.dataCorrupted, let response) = error else { return false }
      return response.status == 200 && response.body == Data(#"{"id": 1, "name": "#.utf8)
    }
    #expect(transport.requestCount == 1)  // a decoding failure is not retried
  }

  @Test("a decoder throwing something else than DecodingError is reported as dataCorrupted with it")
  func otherDecoderError() async {
    struct Failing: ResponseDecoder {
      func decode<Model: Decodable>(_ type: Model.Type, from data: Data) throws -> Model { throw TestError("nope") }
    }
    await #expect {
      try await makeHandler(StubTransport(replies: [.item(1)])).request(
        TestAPI.item(id: 1), as: Item.self, decoder: Failing())
    } throws: { error in
      guard case NetworkError.decoding(.dataCorrupted(let context), _) = error else { return false }
      return context.underlyingError as? TestError == TestError("nope")
    }
  }

  @Test("a non-2xx status is a status error with status, headers and body")
  func statusError() async {
    let transport = StubTransport(replies: [.status(404, headers: ["X-Why": "gone"], body: Data("missing".utf8))])
    await #expect {
      try await makeHandler(transport).request(TestAPI.item(id: 1))
    } throws: { error in
      guard case NetworkError.status(let response) = error else { return false }
      return response.status == 404 && response.headers["X-Why"] == "gone" && response.body == Data("missing".utf8)
    }
  }

  @Test("acceptable statuses are configurable")
  func acceptableStatuses() async throws {
    let transport = StubTransport(replies: [.status(404), .status(304)])
    let all = makeHandler(transport, validation: .all)
    #expect(try await all.request(TestAPI.item(id: 1)).status == 404)
    let some = makeHandler(transport, validation: .statuses([304]))
    #expect(try await some.request(TestAPI.item(id: 1)).status == 304)
  }

  @Test("an invalid URL fails before anything is sent")
  func invalidURL() async {
    let transport = StubTransport(replies: [.item(1)])
    await #expect {
      try await makeHandler(transport).request(BaseURLTarget(baseURL: URL(string: "no-scheme")!))
    } throws: { error in
      guard case NetworkError.invalidURL = error else { return false }
      return true
    }
    #expect(transport.requestCount == 0)
  }

  @Test("a non-transient transport error fails at once with it")
  func transportError() async {
    let transport = StubTransport(replies: [.failure(.cannotFindHost)])
    await #expect {
      try await makeHandler(transport).request(TestAPI.item(id: 1))
    } throws: { error in
      guard case NetworkError.transport(.cannotFindHost) = error else { return false }
      return true
    }
    #expect(transport.requestCount == 1)
  }

  // MARK: Callbacks

  @Test("the callback form calls back exactly once on success")
  func callbackSuccess() async {
    let calls = Recorder<String>()
    let task = makeHandler(StubTransport(replies: [.item(1)])).request(TestAPI.item(id: 1), as: Item.self) { item in
      calls.append("callback \(item.id)")
    } onError: { error in
      calls.append("error \(error)")
    }
    await task.value
    #expect(calls.values == ["callback 1"])
  }

  @Test("the callback form calls onError exactly once on failure")
  func callbackFailure() async {
    let calls = Recorder<String>()
    let task = makeHandler(StubTransport(replies: [.status(400)])).request(TestAPI.item(id: 1)) { _ in
      calls.append("callback")
    } onError: { error in
      calls.append("error \(error.statusCode ?? 0)")
    }
    await task.value
    #expect(calls.values == ["error 400"])
  }

  @Test("a task cancelled before it starts calls onError with cancelled, exactly once, and sends nothing")
  func callbackCancelledBeforeStart() async {
    let transport = StubTransport(replies: [.item(1)])
    let handler = makeHandler(transport)
    let calls = Recorder<String>()
    let gate = Gate()
    let outer = Task {
      try? await gate.wait()  // returns at once: the task is cancelled before the gate opens
      let inner = handler.request(TestAPI.item(id: 1)) { _ in
        calls.append("callback")
      } onError: { error in
        calls.append(error.isCancellation ? "cancelled" : "error \(error)")
      }
      inner.cancel()
      await inner.value
    }
    outer.cancel()
    await outer.value
    #expect(calls.values == ["cancelled"])
    #expect(transport.requestCount == 0)
  }

  // MARK: Cancellation and timeouts

  @Test("cancelling the task cancels the request in flight")
  func cancelInFlight() async {
    let transport = StubTransport(replies: [.never])
    let handler = makeHandler(transport)
    let request = Task { try await handler.request(TestAPI.item(id: 1)) }
    await transport.waitForRequests(1)
    request.cancel()
    await #expect(throws: NetworkError.self) {
      do {
        _ = try await request.value
      } catch let error as NetworkError {
        #expect(error.isCancellation)
        throw error
      }
    }
    #expect(transport.requestCount == 1)
  }

  @Test("a timeout on the injected clock ends a request that never answers")
  func timeout() async {
    let clock = ManualClock()
    let transport = StubTransport(replies: [.never])
    let handler = makeHandler(transport, clock: clock, retryPolicy: .never, timeout: .seconds(10))
    let request = send(handler, TestAPI.item(id: 1))
    await transport.waitForRequests(1)
    await clock.waitForSleepers(count: 1)
    clock.advance(by: .seconds(9))
    #expect(clock.sleeperCount == 1)
    clock.advance(by: .seconds(1))
    let result = await request.value
    guard case .failure(.timedOut(let limit)) = result else {
      Issue.record("expected a timeout, got \(result)")
      return
    }
    #expect(limit == .seconds(10))
  }

  @Test("a timed-out attempt is retried like a transport timeout, and a quick answer beats the timeout")
  func timeoutRetried() async throws {
    let clock = ManualClock()
    let transport = StubTransport(clock: clock, replies: [.never, .item(2)])
    let handler = makeHandler(transport, clock: clock, timeout: .seconds(5))
    let request = Task { try await handler.request(TestAPI.item(id: 2), as: Item.self) }
    await clock.waitForSleepers(count: 1)
    clock.advance(by: .seconds(5))  // the first attempt times out
    await clock.waitForSleepers(count: 1)
    clock.advance(by: .milliseconds(500))  // the backoff
    #expect(try await request.value == Item(id: 2, name: "milk"))
    #expect(transport.requestCount == 2)
  }

  // MARK: Query bridge

  @Test("query(...) bridges into a KilnQuery Query with typed failures")
  func queryBridge() async throws {
    let transport = StubTransport(replies: [.item(1), .status(500)])
    let handler = makeHandler(transport, retryPolicy: .never)
    let query = handler.query(TestAPI.item(id: 1), as: Item.self)
    #expect(try await query.load() == Item(id: 1, name: "milk"))
    let raw = handler.query(TestAPI.item(id: 1)).map { $0.status }
    let result: Result<Int, NetworkError> = await raw.result()
    guard case .failure(.status(let response)) = result else {
      Issue.record("expected a status error, got \(result)")
      return
    }
    #expect(response.status == 500)
  }

  // MARK: Progress

  @Test("download progress is reported per attempt and a retry starts a new attempt")
  func progress() async throws {
    let clock = ManualClock()
    let body = Data(repeating: 1, count: 10)
    let transport = StubTransport(
      clock: clock,
      replies: [
        StubTransport.Reply(.success(HTTPResponse(status: 503, body: body)), progressSteps: 2),
        StubTransport.Reply(.success(HTTPResponse(status: 200, body: body)), progressSteps: 5),
      ]
    )
    let handler = makeHandler(transport, clock: clock)
    let seen = Recorder<DownloadProgress>()
    let request = Task { try await handler.request(TestAPI.item(id: 1), progress: { seen.append($0) }) }
    await clock.waitForSleepers(count: 1)
    clock.advance(by: .milliseconds(500))
    _ = try await request.value
    #expect(
      seen.values.map { "\($0.attempt):\($0.receivedBytes)" } == ["1:5", "1:10", "2:2", "2:4", "2:6", "2:8", "2:10"])
    #expect(seen.values.last?.fractionCompleted == 1)
  }
}

/// A store for the storage-key test.
private typealias MemoryStoreForKeys = SpyKeyValueStore<String, Data>
