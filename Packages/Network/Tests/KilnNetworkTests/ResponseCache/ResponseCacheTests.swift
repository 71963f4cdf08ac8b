import Foundation
import KilnNetwork
import KilnTesting
import Testing

@Suite("Response cache", .timeLimit(.minutes(1)))
struct ResponseCacheTests {
  private let clock = ManualClock()
  private var validFor60s: @Sendable (Data) -> Date {
    { [clock] _ in clock.date.addingTimeInterval(60) }
  }

  @Test("the item store keeps the whole response until its valid-until date, inclusive")
  func itemStore() async throws {
    let spy = SpyKeyValueStore<String, Data>(now: clock.dateProvider)
    let store = ResponseItemStore(spy)
    let now = clock.date
    let response = HTTPResponse(status: 203, headers: ["ETag": "\"1\"", "X": "a", "x": "b"], body: Data("hi".utf8))
    try await store.save(response, forKey: "k", validUntil: now.addingTimeInterval(10), now: now)
    let cached = try await store.response(forKey: "k", now: now.addingTimeInterval(10))
    #expect(cached == response)
    #expect(try await store.response(forKey: "k", now: now.addingTimeInterval(10.001)) == nil)
    #expect(spy.entries["k"]?.expiresAt == now.addingTimeInterval(10))
  }

  @Test("a corrupt entry is a miss and is removed", arguments: ["not json", #"{"version": 99}"#, "[1, 2]"])
  func corruptEntry(bytes: String) async throws {
    let spy = SpyKeyValueStore<String, Data>(now: clock.dateProvider)
    try await spy.setValue(Data(bytes.utf8), forKey: "k")
    #expect(try await ResponseItemStore(spy).response(forKey: "k", now: Date()) == nil)
    #expect(spy.entries["k"] == nil)

    try await spy.setValue(Data(bytes.utf8), forKey: "list")
    #expect(try await ResponseListStore(spy).response(forKey: "list", now: Date()) == nil)
    #expect(spy.entries["list"] == nil)
  }

  @Test("the list store returns the first valid entry, drops expired ones and keeps at most its bound")
  func listStore() async throws {
    let spy = SpyKeyValueStore<String, Data>(now: clock.dateProvider)
    let store = ResponseListStore(spy, maximumCount: 3)
    let now = clock.date
    func response(_ n: Int) -> HTTPResponse { HTTPResponse(status: 200, body: Data("\(n)".utf8)) }
    try await store.save(response(1), forKey: "k", validUntil: now.addingTimeInterval(5), now: now)
    try await store.save(response(2), forKey: "k", validUntil: now.addingTimeInterval(100), now: now)
    #expect(try await store.response(forKey: "k", now: now)?.body == Data("1".utf8))
    #expect(try await store.response(forKey: "k", now: now.addingTimeInterval(6))?.body == Data("2".utf8))
    for n in 3...6 {
      try await store.save(response(n), forKey: "k", validUntil: now.addingTimeInterval(100), now: now)
    }
    // 1 and 2 were pushed out by the bound of 3.
    #expect(try await store.response(forKey: "k", now: now)?.body == Data("4".utf8))
  }

  @Test("concurrent saves to a list store lose nothing")
  func listStoreConcurrentSaves() async throws {
    let spy = SpyKeyValueStore<String, Data>(now: clock.dateProvider)
    let store = ResponseListStore(spy, maximumCount: 100)
    let now = clock.date
    await withTaskGroup(of: Void.self) { group in
      for n in 0..<20 {
        group.addTask {
          try? await store.save(
            HTTPResponse(status: 200, body: Data("\(n)".utf8)), forKey: "k", validUntil: now, now: now)
        }
      }
    }
    let decoded = try JSONSerialization.jsonObject(with: spy.entries["k"]!.value) as? [Any]
    #expect(decoded?.count == 20)
  }

  // MARK: Response modes

  @Test(".normal serves a valid cached response without a request, and goes live once it expires")
  func normalMode() async throws {
    let transport = StubTransport(replies: [.item(1, name: "first"), .item(1, name: "second")])
    let handler = makeHandler(
      transport, storage: ResponseItemStore(SpyKeyValueStore<String, Data>(now: clock.dateProvider)),
      now: clock.dateProvider)
    let validFor60s = self.validFor60s
    #expect(
      try await handler.request(
        TestAPI.item(id: 1), as: Item.self, validUntil: { _ in clock.date.addingTimeInterval(60) }
      ).name == "first")
    #expect(
      try await handler.request(TestAPI.item(id: 1), validUntil: validFor60s).body
        == Data(#"{"id": 1, "name": "first"}"#.utf8))
    #expect(transport.requestCount == 1)
    clock.advance(by: .seconds(61))
    #expect(
      try await handler.request(
        TestAPI.item(id: 1), as: Item.self, validUntil: { _ in clock.date.addingTimeInterval(60) }
      ).name == "second")
    #expect(transport.requestCount == 2)
  }

  @Test("without validUntil the cache is neither read nor written")
  func noValidUntil() async throws {
    let spy = SpyKeyValueStore<String, Data>(now: clock.dateProvider)
    let transport = StubTransport(replies: [.item(1)])
    let handler = makeHandler(transport, storage: ResponseItemStore(spy))
    _ = try await handler.request(TestAPI.item(id: 1))
    _ = try await handler.request(TestAPI.item(id: 1))
    #expect(transport.requestCount == 2)
    #expect(spy.readCount == 0 && spy.writeCount == 0)
  }

  @Test("a cached response that no longer decodes is removed and the network used")
  func cachedUndecodable() async throws {
    let spy = SpyKeyValueStore<String, Data>(now: clock.dateProvider)
    let storage = ResponseItemStore(spy)
    try await storage.save(
      HTTPResponse(status: 200, body: Data("garbage".utf8)), forKey: TestAPI.item(id: 1).storageKey,
      validUntil: .distantFuture, now: Date())
    let transport = StubTransport(replies: [.item(1)])
    let handler = makeHandler(transport, storage: storage)
    #expect(try await handler.request(TestAPI.item(id: 1), as: Item.self, validUntil: { _ in .distantFuture }).id == 1)
    #expect(transport.requestCount == 1)
    #expect(
      try await storage.response(forKey: TestAPI.item(id: 1).storageKey, now: Date())?.body
        == Data(#"{"id": 1, "name": "milk"}"#.utf8))
  }

  @Test("a failing store never fails the request")
  func failingStore() async throws {
    let spy = SpyKeyValueStore<String, Data>(now: clock.dateProvider)
    spy.failReads(with: TestError("disk"))
    spy.failWrites(with: TestError("disk"))
    let transport = StubTransport(replies: [.item(1)])
    let handler = makeHandler(transport, storage: ResponseItemStore(spy))
    #expect(try await handler.request(TestAPI.item(id: 1), validUntil: validFor60s).status == 200)
  }

  @Test(".alwaysLive skips the cache but still stores")
  func alwaysLive() async throws {
    let storage = ResponseItemStore(SpyKeyValueStore<String, Data>(now: clock.dateProvider))
    let transport = StubTransport(replies: [.item(1)])
    let handler = makeHandler(transport, storage: storage, responseMode: .alwaysLive, now: clock.dateProvider)
    _ = try await handler.request(TestAPI.item(id: 1), validUntil: validFor60s)
    _ = try await handler.request(TestAPI.item(id: 1), validUntil: validFor60s)
    #expect(transport.requestCount == 2)
    #expect(try await storage.response(forKey: TestAPI.item(id: 1).storageKey, now: clock.date) != nil)
  }

  @Test(".sample serves the cache, else the sample data, which is then cached; no request goes out")
  func sample() async throws {
    let storage = ResponseItemStore(SpyKeyValueStore<String, Data>(now: clock.dateProvider))
    let transport = StubTransport(replies: [.item(1)])
    let handler = makeHandler(transport, storage: storage, responseMode: .sample, now: clock.dateProvider)
    let sample = Data(#"{"id": 5, "name": "sample"}"#.utf8)
    #expect(
      try await handler.request(TestAPI.sampled(sample), as: Item.self, validUntil: { _ in .distantFuture }).name
        == "sample")
    #expect(try await storage.response(forKey: TestAPI.sampled(sample).storageKey, now: clock.date)?.body == sample)
    // The cached copy wins over the sample.
    let other = Data(#"{"id": 6, "name": "other"}"#.utf8)
    try await storage.save(
      HTTPResponse(status: 200, body: other), forKey: TestAPI.sampled(sample).storageKey, validUntil: .distantFuture,
      now: clock.date)
    #expect(
      try await handler.request(TestAPI.sampled(sample), as: Item.self, validUntil: { _ in .distantFuture }).name
        == "other")
    #expect(transport.requestCount == 0)

    let result = await send(handler, TestAPI.sampled(nil)).value
    guard case .failure(.noSampleData) = result else {
      Issue.record("expected noSampleData, got \(result)")
      return
    }
  }

  @Test(".alwaysFail fails every request without sending it")
  func alwaysFail() async {
    let transport = StubTransport(replies: [.item(1)])
    let handler = makeHandler(transport, responseMode: .alwaysFail)
    let result = await send(handler, TestAPI.item(id: 1)).value
    guard case .failure(.simulatedFailure) = result else {
      Issue.record("expected simulatedFailure, got \(result)")
      return
    }
    #expect(transport.requestCount == 0)
  }
}
