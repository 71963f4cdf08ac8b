import Foundation
import KilnRepositoryNetwork
import KilnRepositoryTesting
import KilnTesting
import Testing
import _KilnSynchronization
import _KilnTestServer

/// An origin with a real idempotency table: `PUT /counts/<param>` with a JSON integer sets
/// the param's value once per `Idempotency-Key`; a repeated key gets the stored answer
/// without applying anything again. `GET /counts/<param>` reads the value.
final class IdempotentOrigin: Sendable {
  struct Applied: Equatable, Sendable {
    var param: String
    var value: Int
    var key: String
  }

  struct State {
    var values: [String: Int] = [:]
    var answers: [String: TestResponse] = [:]
    var applied: [Applied] = []
    /// Answers to give before applying, consumed one per request (then normal service).
    var script: [TestResponse] = []
    /// Whether the next applied request's answer is lost (the connection drops after it).
    var dropNextAnswer = false
    /// A random delay of each answer, in milliseconds, after the change is applied.
    var latency: ClosedRange<Int>?
  }

  let state = KilnMutex(State())

  func handle(_ request: TestRequest) -> TestResponse {
    let param = String(request.path.dropFirst("/counts/".count))
    if request.method == "GET" {
      guard let value = state.withLock({ $0.values[param] }) else { return .status(404) }
      return .json(value)
    }
    guard request.method == "PUT", let key = request.headers["idempotency-key"] else { return .status(400) }
    return state.withLock { state in
      if !state.script.isEmpty { return state.script.removeFirst() }
      if let answer = state.answers[key] { return answer }
      guard let value = try? JSONDecoder().decode(Int.self, from: request.body) else { return .status(422) }
      state.values[param] = value
      state.applied.append(Applied(param: param, value: value, key: key))
      let answer = TestResponse.json(value)
      state.answers[key] = answer
      if state.dropNextAnswer {
        state.dropNextAnswer = false
        return .closeConnection
      }
      if let latency = state.latency { return answer.delayed(by: .milliseconds(Int.random(in: latency))) }
      return answer
    }
  }

  var applied: [Applied] { state.withLock { $0.applied } }
}

/// `PUT /counts/<param>` with a value, or `GET` it.
struct CountTarget: TargetGroup {
  var baseURL: URL
  var param: String
  var value: Int?

  var path: String { "counts/\(param)" }
  var method: HTTPMethod { value == nil ? .get : .put }
  var task: NetworkTask { value.map { .body(.json($0)) } ?? .plain }
}

/// Writes through `HTTPMutator` to a loopback origin that honours `Idempotency-Key`, with a
/// real SQLite outbox.
@Suite(.timeLimit(.minutes(1)))
struct HTTPMutatorTests {
  let clock = ManualClock()

  /// A repository, its outbox on a SQLite file in `directory`, and the writes through
  /// `HTTPMutator` to `baseURL`.
  func rig(
    _ baseURL: URL, directory: URL, options: OutboxOptions = OutboxOptions(maxConcurrentSends: 4)
  ) async throws -> (Repository<String, Int>, Outbox, Writes<String, Int, Int>, SQLiteOutboxStore) {
    let repository = Repository<String, Int>(clock: clock)
    let handler = NetworkHandler(transport: URLSessionTransport(), retryPolicy: .never)
    let mutator = HTTPMutator<String, Int, Int, CountTarget>(
      handler: handler, apply: { value, _ in value },
      target: { value, param in CountTarget(baseURL: baseURL, param: param, value: value) },
      content: { response in try JSONDecoder().decode(Int.self, from: response.body) })
    let store = try SQLiteOutboxStore(url: directory.appendingPathComponent("outbox.sqlite"))
    let outbox = try await Outbox.open(store, clock: clock, options: options)
    let writes = try await repository.writes(
      through: mutator, outbox: outbox, channel: "counts", paramCodec: .automatic, changeCodec: .automatic)
    return (repository, outbox, writes, store)
  }

  static func fetcher(_ baseURL: URL) -> AnyFetcher<String, Int> {
    let handler = NetworkHandler(transport: URLSessionTransport(), retryPolicy: .never)
    return AnyFetcher { param in try await handler.request(CountTarget(baseURL: baseURL, param: param), as: Int.self) }
  }

  static func events(_ outbox: Outbox) -> Recorder<OutboxEvent> {
    let recorder = Recorder<OutboxEvent>()
    let events = outbox.events()
    Task {
      for await event in events { recorder.append(event) }
    }
    return recorder
  }

  @Test("each change reaches the origin once, in order, with its key; the origin's answer is the content")
  func sendsInOrderWithKeys() async throws {
    let origin = IdempotentOrigin()
    let server = try await TestServer.start { origin.handle($0) }
    try await withTemporaryDirectory { directory in
      let (repository, outbox, writes, store) = try await rig(server.baseURL, directory: directory)
      let events = Self.events(outbox)
      var tickets: [MutationTicket] = []
      for value in 1...5 { tickets.append(try await writes.mutate("a", value)) }
      tickets.append(try await writes.mutate("b", 9))
      await events.waitForCount(6)
      #expect(origin.applied.filter { $0.param == "a" }.map(\.value) == [1, 2, 3, 4, 5])
      #expect(origin.applied.map(\.key).sorted() == tickets.map(\.key.headerValue).sorted())
      #expect(try await repository.loadData(param: "a") == 5)
      #expect(try await repository.loadData(param: "b") == 9)
      #expect(try await store.loadAll().isEmpty)
      await outbox.close()
      await store.close()
    }
    try await server.stop()
  }

  @Test("a lost answer is retried with the same key, and the origin applies the change once")
  func lostAnswer() async throws {
    let origin = IdempotentOrigin()
    origin.state.withLock { $0.dropNextAnswer = true }
    let server = try await TestServer.start { origin.handle($0) }
    try await withTemporaryDirectory { directory in
      let (_, outbox, writes, store) = try await rig(server.baseURL, directory: directory)
      let events = Self.events(outbox)
      try await writes.mutate("a", 7)
      await events.waitForCount(1)
      guard case .failed(_, _, _, .transient) = events.values.first else {
        Issue.record("expected a transient failure first: \(events.values)")
        return
      }
      try await waitUntil { clock.sleeperCount > 0 }
      clock.advance(by: .seconds(120))
      await events.waitForCount(2)
      guard case .confirmed = events.values.last else {
        Issue.record("expected a confirmation: \(events.values)")
        return
      }
      #expect(origin.applied.count == 1, "applied once, though sent twice")
      #expect(server.requests.filter { $0.method == "PUT" }.map { $0.headers["idempotency-key"] }.count == 2)
      #expect(Set(server.requests.map { $0.headers["idempotency-key"] }).count == 1)
      await outbox.close()
      await store.close()
    }
    try await server.stop()
  }

  @Test("the origin down, then back: everything drains once a probe gets through, with no duplicate")
  func originDownThenBack() async throws {
    let origin = IdempotentOrigin()
    let server = try await TestServer.start { origin.handle($0) }
    let proxy = try await FaultProxy.start(upstreamPort: server.port, conditions: .refuse)
    let baseURL = URL(string: "http://127.0.0.1:\(proxy.port)")!
    try await withTemporaryDirectory { directory in
      let (_, outbox, writes, store) = try await rig(
        baseURL, directory: directory, options: OutboxOptions(maxConcurrentSends: 2, probeInterval: .seconds(30)))
      for index in 0..<20 { try await writes.mutate("p\(index % 4)", index) }
      try await waitUntil { await outbox.isPaused }
      #expect(origin.applied.isEmpty)
      try await proxy.set(.normal)
      try await waitUntil { clock.sleeperCount > 0 }
      clock.advance(by: .seconds(30))
      try await waitUntil { await outbox.entries.isEmpty }
      #expect(origin.applied.count == 20)
      #expect(Set(origin.applied.map(\.key)).count == 20)
      for param in 0..<4 {
        #expect(
          origin.applied.filter { $0.param == "p\(param)" }.map(\.value) == Array(stride(from: param, to: 20, by: 4)))
      }
      await outbox.close()
      await store.close()
    }
    try await proxy.stop()
    try await server.stop()
  }

  @Test("409 without a resolver rolls back to the origin's truth and reports the rejection; 422 too")
  func conflictRollsBack() async throws {
    let origin = IdempotentOrigin()
    origin.state.withLock { state in
      state.values["a"] = 1
      state.script = [TestResponse.text("taken", status: 409), TestResponse.text("bad", status: 422)]
    }
    let server = try await TestServer.start { origin.handle($0) }
    try await withTemporaryDirectory { directory in
      let (repository, outbox, writes, store) = try await rig(server.baseURL, directory: directory)
      let events = Self.events(outbox)
      let states = LoadingStateRecorder(
        AnyStoreFlowable.from(cacher: repository, fetcher: Self.fetcher(server.baseURL), param: "a").publish())
      await states.waitForState { $0.content == 1 && !$0.isLoading }
      try await writes.mutate("a", 5)
      try await writes.mutate("a", 6)
      await events.waitForCount(2)
      let statuses = events.values.compactMap { event -> Int? in
        if case .rejected(_, _, let status, _, _) = event { status } else { nil }
      }
      #expect(statuses == [409, 422])
      await states.waitForSnapshot {
        $0.state
          == .completed(
            content: 1, next: .fixed(canRequestAdditionalData: false), prev: .fixed(canRequestAdditionalData: false))
          && $0.pending == nil
      }
      #expect(states.states.contains { $0.content == 6 }, "shown before the origin refused it")
      #expect(origin.applied.isEmpty)
      await states.stop()
      await outbox.close()
      await store.close()
    }
    try await server.stop()
  }

  @Test("a problem+json 409 about the key means the first attempt is still running: retried, not rolled back")
  func outstandingConflict() async throws {
    let origin = IdempotentOrigin()
    origin.state.withLock { state in
      state.script = [
        TestResponse(
          status: 409, headers: [("Content-Type", "application/problem+json")],
          body: Array(#"{"title":"A request with this Idempotency-Key is being processed"}"#.utf8))
      ]
    }
    let server = try await TestServer.start { origin.handle($0) }
    try await withTemporaryDirectory { directory in
      let (_, outbox, writes, store) = try await rig(server.baseURL, directory: directory)
      let events = Self.events(outbox)
      try await writes.mutate("a", 5)
      await events.waitForCount(1)
      guard case .failed(_, _, _, .outstanding) = events.values.first else {
        Issue.record("expected outstanding: \(events.values)")
        return
      }
      try await waitUntil { clock.sleeperCount > 0 }
      clock.advance(by: .seconds(120))
      await events.waitForCount(2)
      #expect(origin.applied.map(\.value) == [5])
      await outbox.close()
      await store.close()
    }
    try await server.stop()
  }

  @Test("503 with Retry-After waits that long on the clock")
  func retryAfter() async throws {
    let origin = IdempotentOrigin()
    origin.state.withLock { $0.script = [TestResponse.status(503, headers: [("Retry-After", "90")])] }
    let server = try await TestServer.start { origin.handle($0) }
    try await withTemporaryDirectory { directory in
      let (_, outbox, writes, store) = try await rig(server.baseURL, directory: directory)
      let events = Self.events(outbox)
      try await writes.mutate("a", 5)
      await events.waitForCount(1)
      try await waitUntil { clock.sleeperCount > 0 }
      clock.advance(by: .seconds(89))
      #expect(origin.applied.isEmpty)
      clock.advance(by: .seconds(1))
      await events.waitForCount(2)
      #expect(origin.applied.map(\.value) == [5])
      await outbox.close()
      await store.close()
    }
    try await server.stop()
  }

  @Test("the default classification of failed requests")
  func classification() {
    typealias Mutator = HTTPMutator<String, Int, Int, CountTarget>
    func kind(_ error: NetworkError) -> String {
      switch Mutator.classify(error) {
      case .rejected(let status, _): "rejected \(status)"
      case .transient(_, let retryAfter): "transient \(retryAfter.map { "\($0)" } ?? "-")"
      case .unreachable: "unreachable"
      case .outstanding: "outstanding"
      }
    }
    #expect(kind(.status(HTTPResponse(status: 500))) == "transient -")
    #expect(kind(.status(HTTPResponse(status: 429, headers: ["Retry-After": "7"]))) == "transient 7.0 seconds")
    #expect(kind(.status(HTTPResponse(status: 408))) == "transient -")
    #expect(kind(.status(HTTPResponse(status: 409))) == "rejected 409")
    #expect(kind(.status(HTTPResponse(status: 404))) == "rejected 404")
    #expect(
      kind(
        .status(
          HTTPResponse(
            status: 409, headers: ["Content-Type": "application/problem+json"],
            body: Data(#"{"detail":"idempotency key in use"}"#.utf8)))) == "outstanding")
    #expect(kind(.transport(.connectionRefused)) == "unreachable")
    #expect(kind(.transport(.cannotFindHost)) == "unreachable")
    #expect(kind(.transport(.connectionLost)) == "transient -")
    #expect(kind(.timedOut(.seconds(1))) == "transient -")
    #expect(kind(.cancelled) == "unreachable")
    #expect(kind(.invalidURL("x")) == "rejected 0")
  }
}

/// Polls `condition` (on the continuous clock) until it holds, for 10 seconds at most.
func waitUntil(
  _ condition: @Sendable () async -> Bool, sourceLocation: SourceLocation = #_sourceLocation
) async throws {
  let deadline = ContinuousClock.now.advanced(by: .seconds(10))
  while !(await condition()) {
    guard ContinuousClock.now < deadline else {
      Issue.record("the condition did not hold within 10 s", sourceLocation: sourceLocation)
      throw TestError("timed out")
    }
    try await Task.sleep(for: .milliseconds(1))
  }
}
