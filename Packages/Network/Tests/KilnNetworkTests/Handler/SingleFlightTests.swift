import Foundation
import KilnTesting
import Synchronization
import Testing

@testable import KilnNetwork
@testable import KilnQuery

@Suite("Single flight", .timeLimit(.minutes(1)))
struct SingleFlightTests {
  @Test("identical concurrent GETs share one request and all get the answer", arguments: [false, true])
  func shared(detached: Bool) async throws {
    let clock = ManualClock()
    let transport = StubTransport(clock: clock, replies: [.item(1, delay: .after(.seconds(1)))])
    let handler =
      detached ? detachedHandler(transport) : makeHandler(transport, clock: clock, deduplicatesRequests: true)
    let tasks = (0..<10).map { _ in Task { try await handler.request(TestAPI.item(id: 1), as: Item.self) } }
    await clock.waitForSleepers(count: 1)
    let request = try TestAPI.item(id: 1).makeRequest()
    #expect(await poll(timeout: .seconds(30)) { handler.flights.waiterCount(request, ResultType.self) == 10 })
    clock.advance(by: .seconds(1))
    for task in tasks { #expect(try await task.value.id == 1) }
    #expect(transport.requestCount == 1)
    let stage = try #require(handler.chain.first(Deduplicating.self))
    #expect(stage.startedCount == 1)
    #expect(stage.joinedCount == 9)
    #expect(stage.inFlightCount == 0)
  }

  @Test("different URLs, POSTs and handlers without the option are not shared")
  func notShared() async throws {
    let transport = StubTransport(replies: [.item(1)])
    let handler = makeHandler(transport, deduplicatesRequests: true)
    async let a = handler.request(TestAPI.item(id: 1))
    async let b = handler.request(TestAPI.item(id: 2))
    async let c = handler.request(TestAPI.custom(method: .post))
    async let d = handler.request(TestAPI.custom(method: .post))
    _ = try await (a, b, c, d)
    #expect(transport.requestCount == 4)
  }

  @Test("detached: the first caller leaving does not cancel the shared request; the others get its answer")
  func oneCallerLeaves() async throws {
    let clock = ManualClock()
    let transport = StubTransport(clock: clock, replies: [.item(1, delay: .after(.seconds(1)))])
    let handler = detachedHandler(transport)
    let leaving = send(handler, TestAPI.item(id: 1))
    await clock.waitForSleepers(count: 1)
    let staying = send(handler, TestAPI.item(id: 1))
    let request = try TestAPI.item(id: 1).makeRequest()
    #expect(
      await poll(timeout: .seconds(30)) {
        handler.flights.waiterCount(request, Result<HTTPResponse, any Error>.self) == 2
      })
    leaving.cancel()
    guard case .failure(.cancelled) = await leaving.value else {
      Issue.record("expected the leaving caller cancelled")
      return
    }
    clock.advance(by: .seconds(1))
    #expect(try await staying.value.get().status == 200)
    #expect(transport.requestCount == 1)
  }

  @Test("detached: the shared request is cancelled only when the last caller leaves")
  func cancelledByLastCaller() async throws {
    let transport = StubTransport(replies: [.never])
    let handler = detachedHandler(transport)
    let first = send(handler, TestAPI.item(id: 1))
    await transport.waitForRequests(1)
    let second = send(handler, TestAPI.item(id: 1))
    let request = try TestAPI.item(id: 1).makeRequest()
    #expect(
      await poll(timeout: .seconds(30)) {
        handler.flights.waiterCount(request, Result<HTTPResponse, any Error>.self) == 2
      })

    first.cancel()
    let firstResult = await first.value
    guard case .failure(let firstError) = firstResult, firstError.isCancellation else {
      Issue.record("expected the first caller cancelled, got \(firstResult)")
      return
    }
    // The second caller is still waiting on the same, single request.
    #expect(transport.requestCount == 1)
    #expect(handler.flights.inFlightCount == 1)

    second.cancel()
    let secondResult = await second.value
    guard case .failure(let secondError) = secondResult, secondError.isCancellation else {
      Issue.record("expected the second caller cancelled, got \(secondResult)")
      return
    }
    #expect(await poll(timeout: .seconds(30)) { handler.flights.inFlightCount == 0 })
    #expect(transport.requestCount == 1)
  }

  // MARK: - The first caller sends the shared request (the default)

  @Test("the first caller sends the request in its own task; one who joins waits for it")
  func firstCallerSendsInline() async throws {
    let gate = Gate()
    let tasks = Recorder<Int>()
    let transport = StubTransport(replies: [.item(1)])
    let handler = NetworkHandler(
      chain: RequestChain(
        transport: transport,
        middleware: [
          Deduplicating(), Around { tasks.record(withUnsafeCurrentTask { $0!.hashValue }) },
          Around { await gate.pass() },
        ]))
    let leader = Task {
      let caller = withUnsafeCurrentTask { $0!.hashValue }
      let result: Result<HTTPResponse, NetworkError>
      do throws(NetworkError) {
        result = .success(try await handler.request(TestAPI.item(id: 1)))
      } catch {
        result = .failure(error)
      }
      return (caller, result)
    }
    await gate.waitForArrivals(1)
    let joiner = send(handler, TestAPI.item(id: 1))
    let request = try TestAPI.item(id: 1).makeRequest()
    #expect(await poll(timeout: .seconds(30)) { handler.flights.waiterCount(request, ResultType.self) == 2 })
    gate.open()
    let (caller, leaderResult) = await leader.value
    #expect(try leaderResult.get().status == 200)
    #expect(try await joiner.value.get().status == 200)
    #expect(transport.requestCount == 1)
    #expect(tasks.recorded == [caller])
    #expect(handler.flights.inFlightCount == 0)
  }

  @Test("a cancelled first caller cancels its request; the callers who joined get a second one, never at once")
  func cancelledFirstCallerHandsOver() async throws {
    let gauge = OverlapGauge()
    // The first request never answers (it ends when cancelled); the second answers at once.
    let transport = StubTransport { _, index in index == 0 ? .item(1, delay: .never) : .item(2) }
    let handler = NetworkHandler(
      chain: RequestChain(
        transport: transport,
        middleware: [Deduplicating(), Around(before: { gauge.enter() }, after: { gauge.leave() })]))
    let leader = send(handler, TestAPI.item(id: 1))
    await transport.waitForRequests(1)
    let joiners = (0..<3).map { _ in send(handler, TestAPI.item(id: 1)) }
    let request = try TestAPI.item(id: 1).makeRequest()
    #expect(await poll(timeout: .seconds(30)) { handler.flights.waiterCount(request, ResultType.self) == 4 })

    leader.cancel()
    guard case .failure(.cancelled) = await leader.value else {
      Issue.record("expected the first caller cancelled")
      return
    }
    for joiner in joiners {
      #expect(try await handler.decoder.decode(Item.self, from: joiner.value.get().body).id == 2)
    }
    #expect(transport.requestCount == 2)
    #expect(gauge.maximum == 1)
    #expect(await poll(timeout: .seconds(30)) { handler.flights.inFlightCount == 0 })
    #expect(handler.flights.startedCount == 2, "the joiners' own load counts as started")
  }

  @Test("a cancelled first caller whose request succeeds anyway: the callers who joined get that response")
  func cancelledFirstCallerSucceeds() async throws {
    let gate = Gate()
    let transport = HeldTransport(gate: gate)
    let handler = NetworkHandler(chain: RequestChain(transport: transport, middleware: [Deduplicating()]))
    let leader = send(handler, TestAPI.item(id: 1))
    await gate.waitForArrivals(1)
    let joiner = send(handler, TestAPI.item(id: 1))
    let request = try TestAPI.item(id: 1).makeRequest()
    #expect(await poll(timeout: .seconds(30)) { handler.flights.waiterCount(request, ResultType.self) == 2 })
    leader.cancel()
    gate.open()
    _ = await leader.value
    #expect(try await joiner.value.get().status == 200)
    #expect(transport.requestCount == 1)
  }

  @Test("a caller who joined and is cancelled leaves at once; the first caller's request goes on")
  func joinerLeaves() async throws {
    let gate = Gate()
    let transport = StubTransport(replies: [.item(1)])
    let handler = NetworkHandler(
      chain: RequestChain(transport: transport, middleware: [Deduplicating(), Around { await gate.pass() }]))
    let leader = send(handler, TestAPI.item(id: 1))
    await gate.waitForArrivals(1)
    let joiner = send(handler, TestAPI.item(id: 1))
    let request = try TestAPI.item(id: 1).makeRequest()
    #expect(await poll(timeout: .seconds(30)) { handler.flights.waiterCount(request, ResultType.self) == 2 })
    joiner.cancel()
    guard case .failure(.cancelled) = await joiner.value else {
      Issue.record("expected the joiner cancelled")
      return
    }
    #expect(handler.flights.waiterCount(request, ResultType.self) == 1)
    gate.open()
    #expect(try await leader.value.get().status == 200)
    #expect(transport.requestCount == 1)
  }

  @Test("a caller who joins with a higher priority raises the first caller's")
  func joinerEscalatesFirstCaller() async throws {
    let gate = Gate()
    let priorities = Recorder<TaskPriority>()
    let transport = StubTransport(replies: [.item(1)])
    let handler = NetworkHandler(
      chain: RequestChain(
        transport: transport,
        middleware: [Deduplicating(), Around { await gate.pass() }, Around { priorities.record(Task.currentPriority) }])
    )
    let leader = Task(priority: .low) { await send(handler, TestAPI.item(id: 1)).value }
    await gate.waitForArrivals(1)
    let joiner = Task(priority: .high) { await send(handler, TestAPI.item(id: 1)).value }
    let request = try TestAPI.item(id: 1).makeRequest()
    #expect(await poll(timeout: .seconds(30)) { handler.flights.waiterCount(request, ResultType.self) == 2 })
    #expect(await poll(timeout: .seconds(30)) { handler.flights.loadPriority(request, ResultType.self) == .high })
    gate.open()
    #expect(try await leader.value.get().status == 200)
    #expect(try await joiner.value.get().status == 200)
    #expect(try #require(priorities.recorded.first) >= .high)
  }

  @Test("2,000 identical requests, a third cancelled at random: never two at once, every other caller answered")
  func stressWithCancellations() async throws {
    let gauge = OverlapGauge()
    let transport = StubTransport(replies: [.item(1)])
    let handler = NetworkHandler(
      chain: RequestChain(
        transport: transport,
        middleware: [
          Deduplicating(), Around(before: { gauge.enter() }, after: { gauge.leave() }), Around { await Task.yield() },
        ]))
    let outcomes = await withTaskGroup(of: Result<HTTPResponse, NetworkError>?.self) { group in
      for n in 0..<2_000 {
        let task = send(handler, TestAPI.item(id: 1))
        let cancelled = n % 3 == 0
        if cancelled { task.cancel() }
        group.addTask {
          let outcome = await task.value
          return cancelled ? nil : outcome
        }
      }
      var outcomes: [Result<HTTPResponse, NetworkError>] = []
      for await outcome in group { if let outcome { outcomes.append(outcome) } }
      return outcomes
    }
    #expect(outcomes.count == 1_333)
    for outcome in outcomes { #expect(try outcome.get().status == 200) }
    #expect(gauge.maximum == 1)
    #expect(await poll(timeout: .seconds(30)) { handler.flights.inFlightCount == 0 })
  }

  @Test(
    "requests that differ only in their trace context share a flight (the first caller's is sent); any other field, or no ignored fields, keeps them apart"
  )
  func traceContextIgnored() async throws {
    let clock = ManualClock()
    let url = URL(string: "https://api.example.com/feed")!
    func request(_ traceparent: String, accept: String = "application/json") -> HTTPRequest {
      HTTPRequest(
        url: url, headers: ["Accept": accept, "TraceParent": traceparent, "baggage": "user=\(traceparent.suffix(2))"])
    }
    let first = request("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
    let second = request("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")

    let transport = StubTransport(clock: clock, replies: [.status(200, delay: .after(.seconds(1)))])
    let stage = Deduplicating()
    #expect(stage.identity(of: first) == stage.identity(of: second))
    let chain = RequestChain(transport: transport, middleware: [stage])
    let leader = Task { try await chain.send(first) }
    await clock.waitForSleepers(count: 1)
    let joiner = Task { try await chain.send(second) }
    #expect(await poll(timeout: .seconds(30)) { stage.callerCount(for: second) == 2 })
    clock.advance(by: .seconds(1))
    #expect(try await leader.value.status == 200)
    #expect(try await joiner.value.status == 200)
    #expect(transport.requests == [first])
    #expect(stage.joinedCount == 1)

    // Another field's value, or a stage that ignores nothing, keeps them apart.
    var strict = Deduplicating()
    strict.ignoredFields = []
    #expect(strict.identity(of: first) != strict.identity(of: second))
    var otherBaggage = first
    otherBaggage.headers.set("tenant=b", for: "baggage")
    #expect(stage.identity(of: first) != stage.identity(of: otherBaggage), "baggage may change the answer")
    #expect(
      stage.identity(of: first)
        != stage.identity(of: request("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", accept: "text/plain")))
    let apart = StubTransport(clock: clock, replies: [.status(200, delay: .after(.seconds(1)))])
    let strictChain = RequestChain(transport: apart, middleware: [strict])
    let a = Task { try await strictChain.send(first) }
    let b = Task { try await strictChain.send(second) }
    await clock.waitForSleepers(count: 2)  // both in the transport at once: nothing shared
    clock.advance(by: .seconds(1))
    _ = try await (a.value, b.value)
    #expect(apart.requests.count == 2)
    #expect(strict.joinedCount == 0)
  }
}

private typealias ResultType = Result<HTTPResponse, any Error>

/// A handler whose only stage is a detached `Deduplicating` over `transport`.
private func detachedHandler(_ transport: StubTransport) -> NetworkHandler {
  NetworkHandler(chain: RequestChain(transport: transport, middleware: [Deduplicating(detached: true)]))
}

/// Holds each request until the test opens it, ignoring cancellation (a transport that does).
private final class Gate: Sendable {
  private struct State {
    var isOpen = false
    var arrivals = 0
    var held: [CheckedContinuation<Void, Never>] = []
    var arrivalWaiters: [(Int, CheckedContinuation<Void, Never>)] = []
  }
  private let state = Mutex(State())

  func pass() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let resume = state.withLock { state -> [CheckedContinuation<Void, Never>] in
        state.arrivals += 1
        if !state.isOpen { state.held.append(continuation) }
        let count = state.arrivals
        var ready = state.arrivalWaiters.filter { $0.0 <= count }.map(\.1)
        state.arrivalWaiters.removeAll { $0.0 <= count }
        if state.isOpen { ready.append(continuation) }
        return ready
      }
      for continuation in resume { continuation.resume() }
    }
  }

  func waitForArrivals(_ count: Int) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let ready = state.withLock { state in
        if state.arrivals >= count { return true }
        state.arrivalWaiters.append((count, continuation))
        return false
      }
      if ready { continuation.resume() }
    }
  }

  func open() {
    let held = state.withLock { state in
      state.isOpen = true
      defer { state.held = [] }
      return state.held
    }
    for continuation in held { continuation.resume() }
  }
}

/// Answers 200 to each request once the gate opens, whether the caller was cancelled or not.
private final class HeldTransport: Transport, Sendable {
  let gate: Gate
  private let count = Mutex(0)

  init(gate: Gate) {
    self.gate = gate
  }

  var requestCount: Int { count.withLock { $0 } }

  func send(_ request: HTTPRequest, options: TransportOptions) async throws(TransportError) -> HTTPResponse {
    count.withLock { $0 += 1 }
    await gate.pass()
    return HTTPResponse(status: 200, headers: [:], body: Data())
  }
}

/// The most requests in flight at once below the stage that counts them.
private final class OverlapGauge: Sendable {
  private let counts = Mutex((current: 0, maximum: 0))
  var maximum: Int { counts.withLock { $0.maximum } }
  func enter() {
    counts.withLock { counts in
      counts.current += 1
      counts.maximum = max(counts.maximum, counts.current)
    }
  }
  func leave() { counts.withLock { $0.current -= 1 } }
}

/// What a stage saw, in order: the tasks or the priorities requests were sent in.
private final class Recorder<Value: Sendable>: Sendable {
  private let values = Mutex<[Value]>([])
  var recorded: [Value] { values.withLock { $0 } }
  func record(_ value: Value) { values.withLock { $0.append(value) } }
}

/// A stage that runs `before`, then the rest of the chain, then `after`, in the caller's task.
private struct Around: RequestMiddleware {
  var before: @Sendable () async -> Void = {}
  var after: @Sendable () -> Void = {}

  func send(_ request: HTTPRequest, context: RequestContext, next: RequestNext) async throws(NetworkError)
    -> HTTPResponse
  {
    await before()
    defer { after() }
    return try await next.send(request, context: context)
  }
}
