import Foundation
import KilnTesting
import Testing

@testable import KilnNetwork
@testable import KilnQuery

@Suite("Single flight", .timeLimit(.minutes(1)))
struct SingleFlightTests {
  @Test("identical concurrent GETs share one request and all get the answer")
  func shared() async throws {
    let clock = ManualClock()
    let transport = StubTransport(clock: clock, replies: [.item(1, delay: .after(.seconds(1)))])
    let handler = makeHandler(transport, clock: clock, deduplicatesRequests: true)
    let tasks = (0..<10).map { _ in Task { try await handler.request(TestAPI.item(id: 1), as: Item.self) } }
    await clock.waitForSleepers(count: 1)
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

  @Test("a caller leaving does not cancel the shared request: the others still get its answer")
  func oneCallerLeaves() async throws {
    let clock = ManualClock()
    let transport = StubTransport(clock: clock, replies: [.item(1, delay: .after(.seconds(1)))])
    let handler = makeHandler(transport, clock: clock, deduplicatesRequests: true)
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

  @Test("the shared request is cancelled only when the last caller leaves")
  func cancelledByLastCaller() async throws {
    let transport = StubTransport(replies: [.never])
    let handler = makeHandler(transport, deduplicatesRequests: true)
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
}
