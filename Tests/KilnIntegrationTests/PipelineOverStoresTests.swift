import Foundation
import KilnQuery
import KilnStorage
import KilnTesting
import Testing

/// KilnQuery's decorators over KilnStorage's real stores: files, a SQLite database and a
/// journal on disk, driven by manual clocks.
@Suite("Pipelines over real stores", .timeLimit(.minutes(1)))
struct PipelineOverStoresTests {
  @Test("the Bricks pipeline over a disk cache: network once, then the cache, then the network again")
  func bricksPipelineOverDisk() async throws {
    try await withTemporaryDirectory { directory in
      let now = ManualDate()
      let disk = try DiskCache<String, [Article]>(directory: directory, now: now.provider)
      let cache = disk.storage(forKey: "articles")
      let network = SpyQuery<[ArticleDTO], any Error>(results: [.success(.page(1)), .success(.page(2))])

      let articles =
        cache
        .expiring(validationPolicy: .maxAge(.minutes(5)), now: now.provider)
        .fallback(network.map(with: { dtos in dtos.map(Article.init(dto:)) }).store(into: cache))

      #expect(try await articles.load() == .page(1))
      #expect(network.loadCount == 1)

      now.advance(by: .minutes(5))
      #expect(try await articles.load() == .page(1))
      #expect(network.loadCount == 1, "a value exactly five minutes old is still fresh")

      now.advance(by: .seconds(1))
      #expect(try await articles.load() == .page(2))
      #expect(network.loadCount == 2)

      // The value survives a restart: a new cache on the same directory reads it.
      let reopened = try DiskCache<String, [Article]>(directory: directory, now: now.provider)
      #expect(try await reopened.value(forKey: "articles") == .page(2))
    }
  }

  @Test("offline: when the network fails after expiry, the stale value on disk is served")
  func offlineFallsBackToStaleValue() async throws {
    try await withTemporaryDirectory { directory in
      let now = ManualDate()
      let disk = try DiskCache<String, [Article]>(directory: directory, now: now.provider)
      let cache = disk.storage(forKey: "articles")
      let network = SpyQuery<[Article], any Error>(results: [.success(.page(1)), .failure(TestError("offline"))])

      let fresh = cache.expiring(validationPolicy: .maxAge(.minutes(5)), now: now.provider)
      let strict = fresh.fallback(network.store(into: cache))
      let forgiving = strict.fallback(cache)  // any age, when the network is down

      #expect(try await forgiving.load() == .page(1))
      now.advance(by: .hours(1))
      await #expect(throws: TestError("offline")) { try await strict.load() }
      #expect(try await forgiving.load() == .page(1))
      #expect(network.loadCount == 3)
    }
  }

  @Test("a tiered cache behind a retrying, de-duplicated network: 100 callers, one flight, one retry")
  func tieredCacheRetryAndSerial() async throws {
    try await withTemporaryDirectory { directory in
      let clock = ManualClock()
      let memory = MemoryCache<String, Article>(countLimit: 100, now: clock.dateProvider)
      let database = try SQLiteStore<String, Article>(
        url: directory.appendingPathComponent("cache.sqlite"), now: clock.dateProvider)
      let tiers = TieredCache(memory: memory, disk: database, entryLifetime: .minutes(10), now: clock.dateProvider)
      let article = Article(id: 7, title: "retried")
      let network = SpyQuery<Article, any Error>(results: [.failure(TestError("503")), .success(article)])

      let cached = tiers.storage(forKey: "article/7")
      let load =
        cached
        .expiring(validationPolicy: .maxAge(.minutes(1)), now: clock.dateProvider)
        .fallback(
          network
            .retry(.constant(maxAttempts: 3, delay: .seconds(2)), clock: clock)
            .serial()
            .store(into: cached)
        )

      let callers = (0..<100).map { _ in Task { try await load.load() } }
      await clock.waitForSleepers(count: 1)  // the first attempt failed; the backoff is armed
      #expect(network.loadCount == 1)
      clock.advance(by: .seconds(2))
      for caller in callers { #expect(try await caller.value == article) }
      #expect(network.loadCount == 2, "one shared flight: a failure and its retry")

      #expect(memory["article/7"] == article)
      await database.close()
      let reopened = try SQLiteStore<String, Article>(
        url: directory.appendingPathComponent("cache.sqlite"), now: clock.dateProvider)
      #expect(try await reopened.value(forKey: "article/7") == article)
      #expect(try await load.load() == article)
      #expect(network.loadCount == 2, "fresh in the tiers: no third network load")
      await reopened.close()
    }
  }

  @Test("stale-while-revalidate over a journaled cache that survives restarts")
  func staleWhileRevalidateAcrossRestarts() async throws {
    try await withTemporaryDirectory { directory in
      let now = ManualDate()
      let network = SpyQuery<[Article], any Error> { call in .success(.page(call)) }
      let refreshed = Recorder<[Article]>()

      do {
        let journal = try SerializableCache<String, [Article]>.load(
          name: "feed", directory: directory, entryLifetime: nil, writeDelay: .zero, now: now.provider)
        let feed = journal.storage(forKey: "feed")
          .staleWhileRevalidate(from: network, validationPolicy: .maxAge(.minutes(1)), now: now.provider)
        #expect(try await feed.load() == .page(1))
        try await journal.flush()
      }

      // A restart: a new cache reads the journal back.
      now.advance(by: .minutes(2))
      let journal = try SerializableCache<String, [Article]>.load(
        name: "feed", directory: directory, entryLifetime: nil, writeDelay: .zero, now: now.provider)
      let feed = journal.storage(forKey: "feed")
        .staleWhileRevalidate(
          from: network, validationPolicy: .maxAge(.minutes(1)), now: now.provider,
          onRefresh: { result in if case .success(let page) = result { refreshed.append(page) } })

      #expect(try await feed.load() == .page(1), "stale, served at once")
      await refreshed.waitForCount(1)
      #expect(refreshed.values == [.page(2)])
      #expect(try await journal.value(forKey: "feed") == .page(2))
      #expect(try await feed.load() == .page(2), "fresh again")
      #expect(network.loadCount == 2)
    }
  }

  @Test("two pipelines sharing a key make one network request, and both stores get the value")
  func sharedLoadsAcrossPipelines() async throws {
    try await withTemporaryDirectory { directory in
      let loads = SharedLoads<String>()
      let network = SpyQuery<Article, any Error>(.success(Article(id: 1, title: "shared")))
      network.hold()
      let memory = MemoryCache<String, Article>()
      let disk = try DiskCache<String, Article>(directory: directory)

      let screen = network.shared(by: "article/1", in: loads).store(into: memory.storage(forKey: "1"))
      let widget = network.shared(by: "article/1", in: loads).store(into: disk.storage(forKey: "1"))
      async let first = screen.load()
      async let second = widget.load()
      await network.waitForLoads(1)
      network.release()
      #expect(try await [first, second] == [Article(id: 1, title: "shared"), Article(id: 1, title: "shared")])
      #expect(network.loadCount == 1)
      #expect(memory["1"] == Article(id: 1, title: "shared"))
      #expect(try await disk.value(forKey: "1") == Article(id: 1, title: "shared"))
    }
  }

  @Test("a paginator whose pages come from a page cache, else the network")
  func paginatorOverPageCache() async throws {
    try await withTemporaryDirectory { directory in
      let pages = try SQLiteStore<Int, [Article]>(url: directory.appendingPathComponent("pages.sqlite"))
      try await pages.setValue([Article(id: 1, title: "cached page 1")], forKey: 1)
      let network = SpyQuery<[Article], any Error> { call in
        call == 1 ? .success([Article(id: 2, title: "page 2")]) : .success([])
      }
      let paginator = Paginator(firstPage: 1) { page in
        pages.storage(forKey: page).fallback(network.store(into: pages.storage(forKey: page)))
      }
      #expect(try await paginator.load() == [Article(id: 1, title: "cached page 1")])
      #expect(network.loadCount == 0)
      _ = try await paginator.loadMore()
      #expect(await paginator.data.map(\.id) == [1, 2])
      _ = try await paginator.loadMore()
      #expect(await paginator.hasMore == false)
      #expect(try await pages.value(forKey: 2) == [Article(id: 2, title: "page 2")])
      await pages.close()
    }
  }
}
