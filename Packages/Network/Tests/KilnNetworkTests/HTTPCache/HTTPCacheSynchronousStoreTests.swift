import Foundation
import KilnNetwork
import KilnStorage
import KilnTesting
import Testing
import _KilnSynchronization

/// The version an origin serves, changed by a test.
final class OriginVersion: Sendable {
  private let value = KilnMutex(1)
  var current: Int { value.withLock { $0 } }
  func bump() { value.withLock { $0 += 1 } }
}

/// An `HTTPCache` over a store that answers without suspending (`MemoryCache`) answers fresh
/// hits on a synchronous path, and shares one served response between the hits of one
/// second. Both must be invisible: the same requests get the same answers as over a store
/// that is only asynchronous.
@Suite("HTTPCache over a synchronous store", .timeLimit(.minutes(1)))
struct HTTPCacheSynchronousStoreTests {
  let now = ManualDate(t0)

  /// An origin whose response changes with `version`, with validators and a 10 s lifetime.
  func origin(_ version: OriginVersion) -> ScriptedTransport {
    ScriptedTransport { request in
      let current = version.current
      let tag = "\"v\(current)\""
      var headers: HTTPHeaders = [
        "Cache-Control": "max-age=10", "ETag": tag, "Date": HTTPDate.format(self.now.now),
      ]
      if request.headers.first("If-None-Match") == tag {
        return HTTPResponse(status: 304, headers: headers, body: Data())
      }
      headers.set("text/plain", for: "Content-Type")
      return HTTPResponse(status: 200, headers: headers, body: Data("v\(current)".utf8))
    }
  }

  @Test("the same requests get the same answers, header for header, as over an asynchronous store")
  func sameAnswersAsAnAsynchronousStore() async throws {
    let memory = MemoryCache<String, Data>(entryLifetime: nil)
    let spy = SpyKeyValueStore<String, Data>()
    let version = OriginVersion()
    let fastOrigin = origin(version)
    let slowOrigin = origin(version)
    let fast = fastOrigin.caching(in: HTTPCache(store: memory, now: now.provider))
    let slow = slowOrigin.caching(in: HTTPCache(store: spy, now: now.provider))

    // (advance by, request headers, change the origin's version first)
    let steps: [(Duration, HTTPHeaders, Bool)] = [
      (.zero, [:], false),  // miss, stored
      (.zero, [:], false),  // hit, Age 0
      (.milliseconds(400), [:], false),  // hit in the same second
      (.milliseconds(700), [:], false),  // hit, Age 1
      (.seconds(2), ["If-None-Match": "\"v1\""], false),  // hit answered 304
      (.zero, ["Cache-Control": "no-cache"], false),  // forwarded, revalidated
      (.zero, ["Cache-Control": "max-age=0"], true),  // forwarded, replaced by v2
      (.seconds(3), ["Cache-Control": "min-fresh=20"], false),  // forwarded
      (.seconds(20), [:], false),  // stale: revalidated
      (.zero, ["Range": "bytes=0-0"], false),  // a range of a fresh response
      (.zero, [:], false),  // hit
    ]
    for (index, (advance, headers, bump)) in steps.enumerated() {
      now.advance(by: advance)
      if bump { version.bump() }
      let request = getRequest(headers)
      let a = try await fast.send(request)
      let b = try await slow.send(request)
      #expect(a == b, "step \(index)")
    }
    #expect(fastOrigin.requests.values == slowOrigin.requests.values)
    #expect(fastOrigin.requests.values.count == 5)
  }

  @Test("hits within one second share Age and ttl; the next second renews both")
  func servedHitRenewsEachSecond() async throws {
    let cache = HTTPCache(store: MemoryCache<String, Data>(entryLifetime: nil), now: now.provider)
    let transport = origin(OriginVersion()).caching(in: cache)
    _ = try await transport.send(getRequest())
    func served() async throws -> (age: String?, ttl: Int?) {
      let response = try await transport.send(getRequest())
      return (response.headers.first("Age"), response.cacheStatus?.ttl)
    }
    #expect(try await served() == ("0", 10))
    now.advance(by: .milliseconds(999))
    #expect(try await served() == ("0", 9))  // ttl is rounded down, Age too
    now.advance(by: .milliseconds(1))
    #expect(try await served() == ("1", 9))
    now.advance(by: .seconds(8))
    #expect(try await served() == ("9", 1))
    now.advance(by: .seconds(1))
    let stale = try await transport.send(getRequest())  // age 10 of 10: revalidated
    #expect(stale.cacheStatus?.hit != true)
    #expect(cache.statistics.hits == 4)
  }

  @Test("a request the cache does not serve as it is reaches the origin after one read of the store")
  func oneReadBeforeForwarding() async throws {
    let memory = MemoryCache<String, Data>(entryLifetime: nil)
    let readsBeforeOrigin = Recorder<Int>()
    let origin = ScriptedTransport { _ in
      let statistics = memory.statistics
      readsBeforeOrigin.append(statistics.hits + statistics.misses)
      return HTTPResponse(
        status: 200, headers: ["Cache-Control": "max-age=10", "Date": HTTPDate.format(self.now.now)],
        body: Data("v1".utf8))
    }
    let transport = origin.caching(in: HTTPCache(store: memory, now: now.provider))
    _ = try await transport.send(getRequest())  // a miss
    let afterMiss = memory.statistics.hits + memory.statistics.misses
    _ = try await transport.send(getRequest(["Cache-Control": "no-cache"]))  // a stored response, forwarded
    #expect(readsBeforeOrigin.values == [1, afterMiss + 1])
  }

  @Test("10,000 concurrent hits over a MemoryCache answer one body, with the Age of their second")
  func concurrentHits() async throws {
    let cache = HTTPCache(store: MemoryCache<String, Data>(entryLifetime: nil), now: now.provider)
    let transport = origin(OriginVersion()).caching(in: cache)
    _ = try await transport.send(getRequest())
    let ages = try await withThrowingTaskGroup(of: String?.self) { group in
      for index in 0..<10_000 {
        group.addTask {
          if index == 5_000 { self.now.advance(by: .seconds(1)) }
          let response = try await transport.send(getRequest())
          #expect(response.body == Data("v1".utf8))
          return response.headers.first("Age")
        }
      }
      return try await group.reduce(into: Set<String?>()) { $0.insert($1) }
    }
    #expect(ages.isSubset(of: ["0", "1"]))
    #expect(cache.statistics.hits == 10_000)
  }
}
