import Foundation
import KilnTesting
import Testing

@testable import KilnQuery

@Suite("staleWhileRevalidate(from:...)", .timeLimit(.minutes(1)), .observingFlights)
struct StaleWhileRevalidateTests {
  @Test("a fresh value is served without a refresh")
  func freshServed() async throws {
    let now = ManualDate()
    let cache = SpyStorage<Int>(value: 1, now: now.provider)
    let source = SpyQuery<Int, any Error>(.success(2))
    let query = cache.staleWhileRevalidate(from: source, validationPolicy: .maxAge(.seconds(60)), now: now.provider)

    #expect(try await query.load() == 1)
    #expect(source.loadCount == 0)
    #expect(!query.isRefreshing)
  }

  @Test("a stale value is served at once while a refresh runs in the background and saves")
  func staleServedAndRefreshed() async throws {
    let now = ManualDate()
    let cache = SpyStorage<Int>(value: 1, now: now.provider)
    let source = SpyQuery<Int, any Error>(.success(2))
    source.hold()
    let refreshes = Recorder<Int?>()
    let query = cache.staleWhileRevalidate(
      from: source,
      validationPolicy: .maxAge(.seconds(60)),
      now: now.provider,
      onRefresh: { refreshes.append(try? $0.get()) }
    )
    now.advance(by: .seconds(61))

    #expect(try await query.load() == 1)  // returned while the refresh is held
    await source.waitForLoads(1)
    #expect(query.isRefreshing)

    source.release()
    await refreshes.waitForCount(1)
    #expect(refreshes.values == [2])
    #expect(cache.savedValues == [2])
    #expect(try await query.load() == 2)  // fresh again
    #expect(source.loadCount == 1)
  }

  @Test("at most one refresh is in flight, whoever asks")
  func oneRefreshAtATime() async throws {
    let now = ManualDate()
    let cache = SpyStorage<Int>(value: 1, now: now.provider)
    let source = SpyQuery<Int, any Error>(.success(2))
    source.hold()
    let query = cache.staleWhileRevalidate(from: source, validationPolicy: .maxAge(.seconds(1)), now: now.provider)
    now.advance(by: .seconds(2))

    for _ in 0..<20 {
      #expect(try await query.load() == 1)
    }
    let forced = Task { try await query.refresh() }
    await FlightEvents.current.waitForJoins(1)
    #expect(query.slot.waiterCount == 1)
    #expect(source.loadCount == 1)

    source.release()
    #expect(try await forced.value == 2)
    #expect(source.loadCount == 1)
  }

  @Test("with nothing cached, callers wait for one shared refresh")
  func coldLoadsShare() async throws {
    let cache = SpyStorage<Int>()
    let source = SpyQuery<Int, any Error>(.success(5))
    source.hold()
    let query = cache.staleWhileRevalidate(from: source, validationPolicy: .maxAge(.seconds(60)))
    let a = Task { try await query.load() }
    let b = Task { try await query.load() }
    await FlightEvents.current.waitForJoins(2)
    #expect(query.slot.waiterCount == 2)

    source.release()
    #expect(try await a.value == 5)
    #expect(try await b.value == 5)
    #expect(source.loadCount == 1)
    #expect(cache.value == 5)
  }

  @Test("a value the stale policy rejects is not served: the caller waits for the refresh")
  func tooStale() async throws {
    let now = ManualDate()
    let cache = SpyStorage<Int>(value: 1, now: now.provider)
    let source = SpyQuery<Int, APIError>(.success(2))
    let query = cache.staleWhileRevalidate(
      from: source,
      validationPolicy: .maxAge(.seconds(60)),
      stalePolicy: .maxAge(.seconds(3_600)),
      now: now.provider
    )
    now.advance(by: .seconds(3_601))
    #expect(await query.result() == .success(2))
    #expect(cache.loadCount == 0)
  }

  @Test("a failed refresh is reported and the stale value is still served")
  func failedRefresh() async {
    let now = ManualDate()
    let cache = SpyStorage<Int>(value: 1, now: now.provider)
    let source = SpyQuery<Int, APIError>(.failure(.offline))
    let refreshes = Recorder<APIError?>()
    let query = cache.staleWhileRevalidate(
      from: source,
      validationPolicy: .maxAge(.seconds(60)),
      now: now.provider,
      onRefresh: { refreshes.append($0.failure) }
    )
    now.advance(by: .seconds(61))

    #expect(await query.result() == .success(1))
    await refreshes.waitForCount(1)
    #expect(refreshes.values == [.offline])
    #expect(await query.result() == .success(1))
    #expect(cache.saveCount == 0)
  }

  @Test("with nothing cached, the source's typed failure is the load's failure")
  func coldFailure() async {
    let query = SpyStorage<Int>().staleWhileRevalidate(
      from: TypedQuery(outcome: .failure(.status(503))),
      validationPolicy: .alwaysValid
    )
    #expect(await query.result() == .failure(.status(503)))
  }

  @Test("an unreadable cache counts as empty")
  func unreadableCache() async throws {
    let cache = SpyStorage<Int>(value: 1)
    cache.failLoads(with: TestError("corrupt"))
    let query = cache.staleWhileRevalidate(from: AnyQuery<Int, any Error> { 8 }, validationPolicy: .alwaysValid)
    #expect(try await query.load() == 8)
  }

  @Test("a background refresh is not cancelled when a caller that joined it is")
  func backgroundSurvivesCancellation() async {
    let now = ManualDate()
    let cache = SpyStorage<Int>(value: 1, now: now.provider)
    let source = SpyQuery<Int, any Error>(.success(2))
    source.hold()
    let query = cache.staleWhileRevalidate(from: source, validationPolicy: .maxAge(.seconds(1)), now: now.provider)
    now.advance(by: .seconds(2))
    _ = await query.result()  // starts the background refresh
    await source.waitForLoads(1)

    let joined = Task { try await query.refresh() }
    await FlightEvents.current.waitForJoins(1)
    #expect(query.slot.waiterCount == 1)
    joined.cancel()
    await #expect(throws: CancellationError.self) { try await joined.value }

    #expect(source.cancelledCount == 0)
    source.release()
    await source.waitForCompletions(1)
    #expect(source.cancelledCount == 0)
  }

  @Test("a save failure of a refresh reaches onSaveError")
  func saveFailure() async throws {
    let cache = SpyStorage<Int>()
    cache.failSaves(with: TestError("disk full"))
    let errors = Recorder<String>()
    let query = cache.staleWhileRevalidate(
      from: AnyQuery<Int, any Error> { 3 },
      validationPolicy: .alwaysValid,
      onSaveError: { errors.append("\($0)") }
    )
    #expect(try await query.load() == 3)
    #expect(errors.values == ["TestError(disk full)"])
  }

  @Test("a stale value served while refresh() runs keeps that refresh going when refresh()'s caller is cancelled")
  func staleReadPinsForegroundRefresh() async throws {
    let now = ManualDate()
    let cache = SpyStorage<Int>(value: 1, now: now.provider)
    let source = SpyQuery<Int, any Error>(.success(2))
    source.hold()
    let query = cache.staleWhileRevalidate(from: source, validationPolicy: .maxAge(.seconds(1)), now: now.provider)
    now.advance(by: .seconds(2))

    let pull = Task { try await query.refresh() }  // pull-to-refresh: a refresh its caller waits for
    await source.waitForLoads(1)
    await FlightEvents.current.waitForJoins(1)
    #expect(query.slot.waiterCount == 1)
    #expect(try await query.load() == 1)  // served stale, relying on the refresh in flight
    pull.cancel()  // the pull-to-refresh screen goes away
    await #expect(throws: CancellationError.self) { try await pull.value }
    #expect(query.isRefreshing)

    source.release()
    await source.waitForCompletions(1)
    #expect(source.cancelledCount == 0)
    await FlightEvents.current.waitForEnds(1)
    #expect(!query.isRefreshing)
    #expect(cache.savedValues == [2])
    #expect(source.loadCount == 1)
  }

  @Test("a refresh abandoned by its callers that runs on stays the one in flight: the next starts after it")
  func nextRefreshWaitsForAbandonedRefresh() async throws {
    let cache = SpyStorage<Int>()
    let source = StubbornQuery(value: 2)
    let query = cache.staleWhileRevalidate(
      from: AnyQuery<Int, any Error> { await source.load() },
      validationPolicy: .maxAge(.seconds(1))
    )
    await source.abandonLoad { try await query.load() }  // nothing cached: waits for a refresh

    let next = Task { try await query.load() }
    await FlightEvents.current.waitForStarts(2)
    #expect(query.slot.waitsForAbandonedLoad)
    #expect(source.loadCount == 1)  // at most one refresh in flight

    source.finish()
    #expect(try await next.value == 2)
    #expect(source.loadCount == 2)
    #expect(source.events.values == ["start", "end", "start", "end"])
  }

  @Test("a stale read while an abandoned refresh runs on starts its background refresh after that one")
  func backgroundRefreshWaitsForAbandonedRefresh() async throws {
    let now = ManualDate()
    let cache = SpyStorage<Int>(value: 1, now: now.provider)
    let source = StubbornQuery(value: 2)
    let refreshes = Recorder<Int?>()
    let query = cache.staleWhileRevalidate(
      from: AnyQuery<Int, any Error> { await source.load() },
      validationPolicy: .maxAge(.seconds(1)),
      now: now.provider,
      onRefresh: { refreshes.append(try? $0.get()) }
    )
    now.advance(by: .seconds(2))
    await source.abandonLoad { try await query.refresh() }

    #expect(try await query.load() == 1)  // stale, served at once
    await FlightEvents.current.waitForStarts(2)
    #expect(query.slot.waitsForAbandonedLoad)
    #expect(source.loadCount == 1)
    #expect(query.isRefreshing)

    source.finish()
    await refreshes.waitForCount(2)
    #expect(source.events.values == ["start", "end", "start", "end"])
    #expect(cache.savedValues == [2, 2])
  }
}
