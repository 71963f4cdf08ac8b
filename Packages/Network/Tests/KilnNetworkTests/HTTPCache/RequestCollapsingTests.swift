import Foundation
import KilnStorage
import KilnTesting
import Testing
import _KilnSynchronization

@testable import KilnNetwork

/// One store with a lease table, shared by several `HTTPCache`s as processes share a
/// PostgreSQL table (the real one is tested across processes in KilnStorageTests). Leases do
/// not run out here.
final class LeasedMemoryStore: KeyValueStore, LeasingStore {
  let memory = MemoryCache<String, Data>(entryLifetime: nil)
  private let leases = KilnMutex<[String: String]>([:])
  /// Run once, by the next `takeLease`, before it takes the lease.
  let beforeNextLease = KilnMutex<(@Sendable () async -> Void)?>(nil)

  func entry(forKey key: String) async throws -> CacheEntry<Data>? { memory.entry(forKey: key) }
  func setValue(_ value: Data, forKey key: String, expiresAt: Date?) async throws {
    memory.setValue(value, forKey: key, expiresAt: expiresAt)
  }
  func removeValue(forKey key: String) async throws { memory.removeValue(forKey: key) }
  func removeAll() async throws { memory.removeAll() }

  func takeLease(on key: String, for duration: Duration) async throws -> StoreLease? {
    if let hook = beforeNextLease.withLock({ hook in
      defer { hook = nil }
      return hook
    }) {
      await hook()
    }
    let holder = UUID().uuidString
    return leases.withLock { leases in
      guard leases[key] == nil else { return nil }
      leases[key] = holder
      return StoreLease(key: Data(key.utf8), holder: holder)
    }
  }

  func giveBack(_ lease: StoreLease) async {
    let key = String(decoding: lease.key, as: UTF8.self)
    leases.withLock { leases in
      if leases[key] == lease.holder { leases[key] = nil }
    }
  }

  var heldKeys: [String] { leases.withLock { Array($0.keys) } }
}

@Suite("HTTPCache request collapsing over a leasing store", .timeLimit(.minutes(1)))
struct RequestCollapsingTests {
  let clock = ManualClock()
  let store = LeasedMemoryStore()
  let url = URL(string: "https://api.example.com/feed")!

  var collapsing: RequestCollapsing {
    RequestCollapsing(lease: .seconds(30), waitTimeout: .seconds(10), pollInterval: .milliseconds(20), clock: clock)
  }

  /// A fresh response for a minute, after `delay` on the manual clock.
  func fresh(_ body: String, after delay: Duration = .seconds(1)) -> StubTransport.Reply {
    .status(
      200, headers: ["Cache-Control": "max-age=60", "Date": HTTPDate.format(Date())], body: Data(body.utf8),
      delay: .after(delay))
  }

  /// Two caches over the one store (two processes), each with its chain over `transport`.
  func processes(_ transport: StubTransport, collapsing: RequestCollapsing? = nil) -> [(HTTPCache, RequestChain)] {
    (0..<2).map { _ in
      let cache = HTTPCache(store: store, policy: .shared, collapsing: collapsing ?? self.collapsing)
      return (cache, RequestChain(transport: transport, middleware: [HTTPCaching(cache)]))
    }
  }

  /// Moves the clock a poll at a time whenever someone sleeps on it, until cancelled.
  func ticking() -> Task<Void, Never> {
    Task { [clock] in
      while !Task.isCancelled {
        await clock.waitForSleepers()
        if Task.isCancelled { return }
        clock.advance(by: .milliseconds(20))
      }
    }
  }

  @Test("a miss in two processes sends one request; the second answers with the first's response, marked collapsed")
  func collapsed() async throws {
    let transport = StubTransport(clock: clock, replies: [fresh("feed")])
    let nodes = processes(transport)
    let first = Task { try await nodes[0].1.send(HTTPRequest(url: url)) }
    await clock.waitForSleepers(count: 1)  // in the origin, holding the lease
    let second = Task { try await nodes[1].1.send(HTTPRequest(url: url)) }
    await clock.waitForSleepers(count: 2)  // waiting for the first's response
    let ticker = ticking()
    defer { ticker.cancel() }
    let leader = try await first.value
    let follower = try await second.value
    #expect(transport.requestCount == 1)
    #expect(follower.body == Data("feed".utf8))
    #expect(leader.cacheStatus?.stored == true)
    let status = try #require(follower.cacheStatus)
    #expect(status.collapsed && !status.hit)
    #expect(status.forward == .uriMiss)
    #expect(status.forwardStatus == 200)
    #expect(nodes[1].0.statistics.collapsedResponses == 1)
    #expect(nodes[1].0.statistics.collapseTakeovers == 0)
    #expect(nodes[1].0.statistics.misses == 1)
    #expect(
      counterValue(nodes[1].0.counterReadings(), "kiln_http_cache_collapsed_total", [("outcome", "reused")]) == 1)
    #expect(store.heldKeys.isEmpty, "the lease was given back")
  }

  @Test(
    "a process that missed before another stored and gave the lease back takes the lease, reads the store again and asks no one"
  )
  func missRacesAnotherProcessStore() async throws {
    let transport = StubTransport(clock: clock, replies: [fresh("feed", after: .zero), fresh("again", after: .zero)])
    let nodes = processes(transport)
    // The second process has read the store (a miss); before it takes the lease, the first
    // process asks, stores and gives the lease back.
    store.beforeNextLease.withLock { hook in
      hook = { _ = try? await nodes[0].1.send(HTTPRequest(url: url)) }
    }
    let response = try await nodes[1].1.send(HTTPRequest(url: url))
    #expect(transport.requestCount == 1)
    #expect(response.body == Data("feed".utf8))
    let status = try #require(response.cacheStatus)
    #expect(status.collapsed && status.forward == .uriMiss)
    #expect(nodes[1].0.statistics.collapsedResponses == 1)
    #expect(nodes[1].0.statistics.collapseTakeovers == 0)
    #expect(store.heldKeys.isEmpty)
  }

  @Test("a holder whose request fails gives the lease back; a waiter takes it over and asks the origin itself")
  func takeover() async throws {
    let transport = StubTransport(
      clock: clock, replies: [.failure(.connectionRefused, delay: .after(.seconds(1))), fresh("second", after: .zero)])
    let nodes = processes(transport)
    let first = Task { try await nodes[0].1.send(HTTPRequest(url: url)) }
    await clock.waitForSleepers(count: 1)
    let second = Task { try await nodes[1].1.send(HTTPRequest(url: url)) }
    await clock.waitForSleepers(count: 2)
    let ticker = ticking()
    defer { ticker.cancel() }
    await #expect(throws: NetworkError.self) { try await first.value }
    let response = try await second.value
    #expect(response.body == Data("second".utf8))
    #expect(response.cacheStatus?.stored == true)
    #expect(transport.requestCount == 2)
    #expect(nodes[1].0.statistics.collapseTakeovers == 1)
    #expect(store.heldKeys.isEmpty)
  }

  @Test("a waiter asks the origin without the lease once its wait timeout passes")
  func waitTimeout() async throws {
    let transport = StubTransport(clock: clock, replies: [.never, fresh("own", after: .zero)])
    let short = RequestCollapsing(
      lease: .seconds(30), waitTimeout: .milliseconds(100), pollInterval: .milliseconds(20), clock: clock)
    let nodes = processes(transport, collapsing: short)
    let stuck = Task { try await nodes[0].1.send(HTTPRequest(url: url)) }
    await transport.waitForRequests(1)  // in the origin, holding the lease, never answered
    let ticker = ticking()
    defer { ticker.cancel() }
    let response = try await nodes[1].1.send(HTTPRequest(url: url))
    #expect(response.body == Data("own".utf8))
    #expect(transport.requestCount == 2)
    #expect(nodes[1].0.statistics.collapseWaitTimeouts == 1)
    stuck.cancel()
    _ = await stuck.result
    #expect(store.heldKeys.isEmpty, "a cancelled holder gives its lease back")
  }

  @Test(
    "a request that refuses stored responses (no-cache, Pragma), and a cache without collapsing, never wait for a held lease"
  )
  func neverWaits() async throws {
    let other = URL(string: "https://api.example.com/other")!
    let held = try #require(try await store.takeLease(on: HTTPCache.key(for: url), for: .seconds(30)))
    let heldOther = try #require(try await store.takeLease(on: HTTPCache.key(for: other), for: .seconds(30)))
    let transport = StubTransport(replies: [fresh("x", after: .zero)])
    let nodes = processes(transport)
    let otherTransport = StubTransport(replies: [fresh("y", after: .zero)])
    // No clock moves in this test: a request that waited would never end.
    let noCache = try await nodes[0].1.send(HTTPRequest(url: url, headers: ["Cache-Control": "no-cache"]))
    #expect(noCache.cacheStatus?.forward == .uriMiss)
    let again = try await nodes[1].1.send(HTTPRequest(url: url, headers: ["Cache-Control": "no-cache"]))
    #expect(again.cacheStatus?.forward == .request)
    let pragma = try await nodes[1].1.send(HTTPRequest(url: url, headers: ["Pragma": "no-cache"]))
    #expect(pragma.cacheStatus?.forward == .request)
    let alone = HTTPCache(store: store, policy: .shared, collapsing: nil)
    #expect(alone.collapsing == nil)
    let response = try await RequestChain(transport: otherTransport, middleware: [HTTPCaching(alone)])
      .send(HTTPRequest(url: other))
    #expect(response.cacheStatus?.forward == .uriMiss)
    #expect(transport.requestCount == 3 && otherTransport.requestCount == 1)  // before the third URL
    let third = URL(string: "https://api.example.com/third")!
    let heldThird = try #require(try await store.takeLease(on: HTTPCache.key(for: third), for: .seconds(30)))
    let pragmaMiss = try await nodes[1].1.send(HTTPRequest(url: third, headers: ["Pragma": "no-cache"]))
    #expect(pragmaMiss.cacheStatus?.forward == .uriMiss)
    #expect(transport.requestCount == 4)
    await store.giveBack(held)
    await store.giveBack(heldOther)
    await store.giveBack(heldThird)

    // Collapsing is on by default over a leasing store, and off over any other.
    #expect(HTTPCache(store: store).collapsing != nil)
    #expect(HTTPCache(store: MemoryCache<String, Data>(entryLifetime: nil)).collapsing == nil)
  }

  @Test("a background revalidation (stale-while-revalidate) is left to the process holding the lease")
  func backgroundRevalidation() async throws {
    let stale = StubTransport.Reply.status(
      200, headers: ["Cache-Control": "max-age=0, stale-while-revalidate=600", "Date": HTTPDate.format(Date())],
      body: Data("v".utf8))
    let transport = StubTransport(replies: [stale])
    let nodes = processes(transport)
    _ = try await nodes[0].1.send(HTTPRequest(url: url))  // stored, stale at once, usable while revalidated

    let held = try #require(try await store.takeLease(on: HTTPCache.key(for: url), for: .seconds(30)))
    let served = try await nodes[1].1.send(HTTPRequest(url: url))
    #expect(served.cacheStatus?.detail == "stale-while-revalidate")
    await nodes[1].0.waitForRevalidations()
    #expect(transport.requestCount == 1, "another process holds the URL: it revalidates")

    await store.giveBack(held)
    _ = try await nodes[1].1.send(HTTPRequest(url: url))
    await nodes[1].0.waitForRevalidations()
    #expect(transport.requestCount == 2, "with the lease free, this process revalidates")
    #expect(store.heldKeys.isEmpty)
  }

  @Test("after a response others cannot take from the store (no-store), the process stops waiting for that URL")
  func passesUnstorable() async throws {
    let transport = StubTransport(replies: [
      .status(200, headers: ["Cache-Control": "no-store"], body: Data("private".utf8))
    ])
    let nodes = processes(transport)
    let first = try await nodes[0].1.send(HTTPRequest(url: url))  // holds the lease, gets no-store
    #expect(first.cacheStatus?.stored == false)
    let held = try #require(try await store.takeLease(on: HTTPCache.key(for: url), for: .seconds(30)))
    // No clock moves: a request that waited would never end.
    let again = try await nodes[0].1.send(HTTPRequest(url: url))
    #expect(again.status == 200)
    #expect(transport.requestCount == 2)
    await store.giveBack(held)
  }

  @Test("a waiter cancelled while it waits stops at once, holding no lease")
  func cancelledWaiter() async throws {
    let transport = StubTransport(clock: clock, replies: [fresh("feed")])
    let nodes = processes(transport)
    let first = Task { try await nodes[0].1.send(HTTPRequest(url: url)) }
    await clock.waitForSleepers(count: 1)
    let waiter = Task { try await nodes[1].1.send(HTTPRequest(url: url)) }
    await clock.waitForSleepers(count: 2)
    waiter.cancel()
    await #expect(throws: NetworkError.self) { try await waiter.value }
    clock.advance(by: .seconds(1))
    #expect(try await first.value.status == 200)
    #expect(transport.requestCount == 1)
    #expect(store.heldKeys.isEmpty)
  }
}
