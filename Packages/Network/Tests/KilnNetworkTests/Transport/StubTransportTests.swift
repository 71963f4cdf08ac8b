import Foundation
import KilnNetwork
import KilnTesting
import Testing

@Suite("StubTransport", .timeLimit(.minutes(1)))
struct StubTransportTests {
  private let request = HTTPRequest(url: URL(string: "https://example.com/a")!)

  @Test("answers immediately, in order, the last reply repeating, and records each request")
  func immediateInOrder() async throws {
    let transport = StubTransport(replies: [.status(500), .failure(.connectionLost), .item(1)])
    #expect(try await transport.send(request).status == 500)
    await #expect(throws: TransportError.connectionLost) { try await transport.send(request) }
    #expect(try await transport.send(request).status == 200)
    #expect(try await transport.send(request).status == 200)
    #expect(transport.requestCount == 4)
    #expect(transport.requests.allSatisfy { $0.url == request.url })
  }

  @Test("a delayed reply arrives when the injected clock reaches the delay")
  func delayed() async throws {
    let clock = ManualClock()
    let transport = StubTransport(clock: clock, replies: [.item(1, delay: .after(.seconds(2)))])
    let request = self.request
    let sending = Task { try await transport.send(request) }
    await clock.waitForSleepers(count: 1)
    clock.advance(by: .milliseconds(1999))
    #expect(clock.sleeperCount == 1)
    clock.advance(by: .milliseconds(1))
    #expect(try await sending.value.status == 200)
  }

  @Test("a never-answering reply ends with cancelled when its task is cancelled")
  func never() async {
    let transport = StubTransport(replies: [.never])
    let request = self.request
    let sending = Task { try await transport.send(request) }
    await transport.waitForRequests(1)
    sending.cancel()
    await #expect(throws: TransportError.cancelled) { try await sending.value }
  }

  @Test("a delayed reply ends with cancelled when its task is cancelled")
  func delayedCancelled() async {
    let clock = ManualClock()
    let transport = StubTransport(clock: clock, replies: [.item(1, delay: .after(.seconds(60)))])
    let request = self.request
    let sending = Task { try await transport.send(request) }
    await clock.waitForSleepers(count: 1)
    sending.cancel()
    await #expect(throws: TransportError.cancelled) { try await sending.value }
  }

  @Test("progress is reported in steps and a body over the limit is an error")
  func progressAndLimit() async throws {
    let body = Data(repeating: 7, count: 100)
    let transport = StubTransport(replies: [
      StubTransport.Reply(.success(HTTPResponse(status: 200, body: body)), progressSteps: 4)
    ])
    let seen = Recorder<Int64>()
    _ = try await transport.send(
      request, options: TransportOptions(onProgress: { received, _ in seen.append(received) }))
    #expect(seen.values == [25, 50, 75, 100])
    await #expect(throws: TransportError.bodyTooLarge(limit: 99)) {
      try await transport.send(request, options: TransportOptions(maximumBodySize: 99))
    }
  }
}
