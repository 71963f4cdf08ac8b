import Foundation
import KilnTesting
import Testing

@testable import KilnStorage

@Suite("SerializableCache", .timeLimit(.minutes(2)))
struct SerializableCacheTests {
  typealias Cache = SerializableCache<String, Article>

  static func load(_ directory: URL, name: String = "articles", now: ManualDate = ManualDate()) throws -> Cache {
    try Cache.load(name: name, directory: directory, entryLifetime: nil, writeDelay: .seconds(1), now: now.provider)
  }

  @Test("inserts, updates and removals all survive a restart after flush")
  func everyChangePersists() async throws {
    try await withTemporaryDirectory { directory in
      let cache = try Self.load(directory)
      cache["a"] = Article(id: 1, title: "first")
      cache["b"] = Article(id: 2, title: "second")
      cache["a"] = Article(id: 1, title: "first, updated")  // the seed lost updates
      cache["b"] = nil
      cache["c"] = Article(id: 3, title: "third")
      try await cache.flush()

      let reloaded = try Self.load(directory)
      #expect(reloaded["a"] == Article(id: 1, title: "first, updated"))
      #expect(reloaded["b"] == nil)
      #expect(reloaded["c"] == Article(id: 3, title: "third"))
      #expect(reloaded.count == 2)
      #expect(reloaded.recovery == .init(discardedBytes: 0, undecodableRecords: 0, setAside: nil))
    }
  }

  @Test("a restart after flush returns exactly the last state of a long random history")
  func randomHistory() async throws {
    try await withTemporaryDirectory { directory in
      var model: [String: Article] = [:]
      var generator = SeededRandomNumberGenerator(seed: TestSeed.current &+ UInt64(42))
      for round in 0..<4 {
        let cache = try Self.load(directory)
        #expect(Dictionary(uniqueKeysWithValues: cache.keys.map { ($0, cache[$0]!) }) == model, "round \(round)")
        for step in 0..<2_000 {
          let key = "k\(generator.next() % 60)"
          switch generator.next() % 20 {
          case 0:
            cache.removeValue(forKey: key)
            model[key] = nil
          case 1 where step % 500 == 0:
            cache.removeAll()
            model = [:]
          default:
            let article = Article(id: step, title: String(repeating: "x", count: Int(generator.next() % 200)))
            cache[key] = article
            model[key] = article
          }
          if step % 300 == 0 { try await cache.flush() }
        }
        try await cache.flush()
      }
      let final = try Self.load(directory)
      #expect(Dictionary(uniqueKeysWithValues: final.keys.map { ($0, final[$0]!) }) == model)
    }
  }

  @Test("changes are written together after the write delay, without flush")
  func coalescedWrites() async throws {
    try await withTemporaryDirectory { directory in
      let clock = ManualClock()
      let cache = try Cache.load(
        name: "coalesced", directory: directory, entryLifetime: nil, writeDelay: .seconds(5), clock: clock)
      cache["a"] = Article(id: 1, title: "a")
      cache["b"] = Article(id: 2, title: "b")
      cache["a"] = Article(id: 3, title: "a2")
      await clock.waitForSleepers(count: 1)
      #expect(clock.sleeperCount == 1)  // one write for the three changes
      #expect(await cache.journalSize == 0)
      #expect(!FileManager.default.fileExists(atPath: cache.fileURL.path))
      clock.advance(by: .seconds(5))
      await cache.waitForScheduledWrite()
      #expect(await cache.journalSize > 0)
      let reloaded = try Cache.load(name: "coalesced", directory: directory, entryLifetime: nil)
      #expect(reloaded["a"] == Article(id: 3, title: "a2"))
      #expect(reloaded["b"] == Article(id: 2, title: "b"))
    }
  }

  @Test("the journal is compacted: 10,000 updates of 20 keys keep the file near the live size")
  func compaction() async throws {
    try await withTemporaryDirectory { directory in
      let cache = try Self.load(directory)
      var maximum = 0
      for step in 0..<10_000 {
        cache["k\(step % 20)"] = Article(id: step, title: String(repeating: "t", count: 100))
        if step % 100 == 99 {
          try await cache.flush()
          maximum = max(maximum, await cache.journalSize)
        }
      }
      try await cache.flush()
      let recordSize = 160
      #expect(maximum < 2 * 20 * recordSize + Cache.compactionSlack + 100 * recordSize)
      let reloaded = try Self.load(directory)
      #expect(reloaded.count == 20)
      #expect(reloaded["k19"]?.id == 9_999)
    }
  }

  @Test(
    "a torn or corrupt tail is cut off and every intact change kept",
    arguments: [3, 9, 25])
  func tornTail(cut: Int) async throws {
    try await withTemporaryDirectory { directory in
      let cache = try Self.load(directory)
      cache["a"] = Article(id: 1, title: "kept")
      try await cache.flush()
      cache["b"] = Article(id: 2, title: "torn")
      try await cache.flush()
      let url = cache.fileURL
      let bytes = try Data(contentsOf: url)
      try bytes.dropLast(cut).write(to: url)
      let reloaded = try Self.load(directory)
      #expect(reloaded["a"] == Article(id: 1, title: "kept"))
      #expect(reloaded["b"] == nil)
      #expect(reloaded.recovery.discardedBytes > 0)
      // The file was cut back to the intact records, so new appends follow them.
      reloaded["c"] = Article(id: 3, title: "after")
      try await reloaded.flush()
      let again = try Self.load(directory)
      #expect(again["a"] != nil && again["c"] != nil)
      #expect(again.recovery.discardedBytes == 0)
    }
  }

  @Test("a flipped bit in a record drops that record and everything after it, nothing before")
  func flippedBit() async throws {
    try await withTemporaryDirectory { directory in
      let cache = try Self.load(directory)
      cache["a"] = Article(id: 1, title: "first")
      try await cache.flush()
      let intact = try Data(contentsOf: cache.fileURL).count
      cache["b"] = Article(id: 2, title: "second")
      try await cache.flush()
      var bytes = [UInt8](try Data(contentsOf: cache.fileURL))
      bytes[intact + 12] ^= 0x40
      try Data(bytes).write(to: cache.fileURL)
      let reloaded = try Self.load(directory)
      #expect(reloaded["a"] == Article(id: 1, title: "first"))
      #expect(reloaded["b"] == nil)
      #expect(try Data(contentsOf: cache.fileURL).count == intact)
    }
  }

  @Test("a file that is not a journal is set aside, not deleted, and the cache starts empty")
  func foreignFile() async throws {
    try await withTemporaryDirectory { directory in
      let url = directory.appendingPathComponent("articles.kilncache")
      try Data("{\"legacy\": true}".utf8).write(to: url)
      let cache = try Self.load(directory)
      #expect(cache.count == 0)
      let aside = try #require(cache.recovery.setAside)
      #expect(try Data(contentsOf: aside) == Data("{\"legacy\": true}".utf8))
      cache["a"] = Article(id: 1, title: "new")
      try await cache.flush()
      #expect(try Self.load(directory)["a"] != nil)
    }
  }

  @Test("records that no longer decode are skipped and counted; their keys read as misses")
  func undecodableRecords() async throws {
    try await withTemporaryDirectory { directory in
      let old = try SerializableCache<String, String>.load(name: "articles", directory: directory, entryLifetime: nil)
      old["a"] = "not an article"
      try await old.flush()
      let cache = try Self.load(directory)
      #expect(cache["a"] == nil)
      #expect(cache.recovery.undecodableRecords == 1)
    }
  }

  @Test(
    "invalid names are rejected with a typed error",
    arguments: ["", ".", "..", "a/b", "../escape", "nul\0", String(repeating: "n", count: 201)])
  func invalidNames(name: String) async throws {
    try await withTemporaryDirectory { directory in
      #expect {
        _ = try Cache.load(name: name, directory: directory)
      } throws: { error in
        guard case SerializableCacheError.invalidName(let rejected) = error else { return false }
        return rejected == name
      }
      let created = try FileManager.default.contentsOfDirectory(atPath: directory.path)
      #expect(created.isEmpty)
    }
  }

  @Test("entries expire on the injected clock, and expired entries are not loaded again")
  func expiry() async throws {
    try await withTemporaryDirectory { directory in
      let now = ManualDate()
      let cache = try Cache.load(name: "e", directory: directory, entryLifetime: .seconds(60), now: now.provider)
      cache["a"] = Article(id: 1, title: "a")
      try cache.setValue(Article(id: 2, title: "b"), forKey: "b", expiresAt: now() + 600)
      #expect(cache.entry(forKey: "a")?.expiresAt == now() + 60)
      try await cache.flush()
      now.advance(by: .seconds(61))
      #expect(cache["a"] == nil)
      let reloaded = try Cache.load(name: "e", directory: directory, entryLifetime: .seconds(60), now: now.provider)
      #expect(reloaded["a"] == nil)
      #expect(reloaded["b"] == Article(id: 2, title: "b"))
      now.advance(by: .seconds(600))
      #expect(reloaded.removeExpired() == 1)
      #expect(reloaded.count == 0)
    }
  }

  @Test("the default lifetime is Loadability's one hour")
  func defaultLifetime() async throws {
    try await withTemporaryDirectory { directory in
      let now = ManualDate()
      let cache = try Cache.load(name: "d", directory: directory, now: now.provider)
      cache["a"] = Article(id: 1, title: "a")
      now.advance(by: .seconds(3600))
      #expect(cache["a"] != nil)
      now.advance(by: .seconds(1))
      #expect(cache["a"] == nil)
    }
  }

  @Test("a count limit evicts the least recently used entry, and the eviction persists")
  func countLimit() async throws {
    try await withTemporaryDirectory { directory in
      let cache = try Cache.load(name: "l", directory: directory, entryLifetime: nil, countLimit: 2)
      cache["a"] = Article(id: 1, title: "a")
      cache["b"] = Article(id: 2, title: "b")
      _ = cache["a"]
      cache["c"] = Article(id: 3, title: "c")
      #expect(cache["b"] == nil)
      try await cache.flush()
      let reloaded = try Cache.load(name: "l", directory: directory, entryLifetime: nil, countLimit: 2)
      #expect(Set(reloaded.keys) == ["a", "c"])
    }
  }

  @Test("removeAll persists")
  func removeAllPersists() async throws {
    try await withTemporaryDirectory { directory in
      let cache = try Self.load(directory)
      for id in 0..<10 { cache["\(id)"] = Article(id: id, title: "") }
      try await cache.flush()
      cache.removeAll()
      cache["z"] = Article(id: 99, title: "after")
      try await cache.flush()
      let reloaded = try Self.load(directory)
      #expect(reloaded.keys == ["z"])
    }
  }

  @Test("a value that cannot be encoded is a typed error from setValue, and from flush after a subscript")
  func encodingFailures() async throws {
    try await withTemporaryDirectory { directory in
      let cache = try SerializableCache<String, Double>.load(
        name: "nan", directory: directory, entryLifetime: nil, keyCodec: .automatic, valueCodec: .json())
      #expect {
        try cache.setValue(.nan, forKey: "k", expiresAt: nil)
      } throws: { error in
        guard case SerializableCacheError.valueEncodingFailed = error else { return false }
        return true
      }
      cache["k"] = 1
      cache["k"] = .nan  // cannot be stored: the key is removed rather than left stale
      #expect(cache["k"] == nil)
      await #expect {
        try await cache.flush()
      } throws: { error in
        guard case SerializableCacheError.valueEncodingFailed = error else { return false }
        return true
      }
      try await cache.flush()  // reported once
      let reloaded = try SerializableCache<String, Double>.load(name: "nan", directory: directory, entryLifetime: nil)
      #expect(reloaded["k"] == nil)
    }
  }

  @Test("a failed write is reported by flush, and the next write restores the whole state on disk")
  func writeFailureRecovery() async throws {
    try await withTemporaryDirectory { root in
      let directory = root.appendingPathComponent("cache")
      let cache = try Self.load(directory)
      cache["a"] = Article(id: 1, title: "a")
      try await cache.flush()
      try FileManager.default.removeItem(at: directory)
      cache["b"] = Article(id: 2, title: "b")
      // The open descriptor still points at the deleted file: write through a rename
      // failure instead, by making the next write a snapshot into a missing directory.
      for step in 0..<2_000 { cache["x\(step % 10)"] = Article(id: step, title: String(repeating: "y", count: 100)) }
      await #expect {
        try await cache.flush()
      } throws: { error in
        guard case SerializableCacheError.fileSystem = error else { return false }
        return true
      }
      try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
      try await cache.flush()
      let reloaded = try Self.load(directory)
      #expect(reloaded["a"] == Article(id: 1, title: "a"))
      #expect(reloaded["b"] == Article(id: 2, title: "b"))
      #expect(reloaded.count == 12)
    }
  }

  @Test("a journal deleted behind the cache's back is rewritten whole on the next write")
  func deletedJournal() async throws {
    try await withTemporaryDirectory { directory in
      let cache = try Self.load(directory)
      cache["a"] = Article(id: 1, title: "a")
      cache["b"] = Article(id: 2, title: "b")
      try await cache.flush()
      try FileManager.default.removeItem(at: cache.fileURL)
      cache["c"] = Article(id: 3, title: "c")
      try await cache.flush()
      let reloaded = try Self.load(directory)
      #expect(Set(reloaded.keys) == ["a", "b", "c"])
    }
  }

  enum JournalLoss: String, CaseIterable, Sendable {
    /// Deleted while no descriptor is open: after loading an existing journal.
    case deletedAfterLoad
    /// Deleted while no descriptor is open: after a compaction renamed a new file in.
    case deletedAfterCompaction
    /// Replaced by a shorter journal while no descriptor is open.
    case replacedAfterLoad
    /// Emptied while the writer's descriptor is open on it.
    case emptiedWhileOpen
  }

  @Test(
    "a journal deleted, replaced or emptied behind the cache's back is rewritten whole, header first",
    arguments: JournalLoss.allCases)
  func lostJournal(loss: JournalLoss) async throws {
    try await withTemporaryDirectory { directory in
      let first = try Self.load(directory)
      first["a"] = Article(id: 1, title: "a")
      try await first.flush()
      let cache: Cache
      switch loss {
      case .deletedAfterLoad, .replacedAfterLoad:
        cache = try Self.load(directory)
      case .deletedAfterCompaction:
        cache = first
        for step in 0..<300 { cache["a"] = Article(id: step, title: String(repeating: "t", count: 1_000)) }
        cache["a"] = Article(id: 1, title: "a")
        try await cache.flush()
        #expect(await cache.journalSize < 1_000)  // compacted: the descriptor is closed
      case .emptiedWhileOpen:
        cache = first
        cache["z"] = Article(id: 26, title: "z")
        try await cache.flush()  // an append: the descriptor stays open
        cache.removeValue(forKey: "z")
        try await cache.flush()
      }
      switch loss {
      case .deletedAfterLoad, .deletedAfterCompaction:
        try FileManager.default.removeItem(at: cache.fileURL)
      case .replacedAfterLoad:
        try Data("KLNJ".utf8 + [1, 0, 0, 0]).write(to: cache.fileURL)
      case .emptiedWhileOpen:
        try FileHandle(forWritingTo: cache.fileURL).truncate(atOffset: 0)
      }
      cache["b"] = Article(id: 2, title: "b")
      try await cache.flush()
      #expect(try Data(contentsOf: cache.fileURL).prefix(4) == Data("KLNJ".utf8))
      let reloaded = try Self.load(directory)
      #expect(reloaded.recovery.setAside == nil)
      #expect(reloaded.recovery.discardedBytes == 0)
      #expect(reloaded["a"] == Article(id: 1, title: "a"))
      #expect(reloaded["b"] == Article(id: 2, title: "b"))
      #expect(reloaded.count == 2)
    }
  }

  @Test("compaction files left by dead writers or an earlier process with this pid are removed when loading")
  func staleCompactionFiles() async throws {
    try await withTemporaryDirectory { directory in
      let leftovers = [
        "articles.kilncache.tmp-\(getpid())",  // 0.1.0's name, an earlier process with this pid
        "articles.kilncache.tmp-2147483646",  // 0.1.0's name, a dead process
        "articles.kilncache.tmp-\(getpid())-9e3779b97f4a7c15-1",
        "articles.kilncache.tmp-2147483646-9e3779b97f4a7c15-1",
      ].map { directory.appendingPathComponent($0) }
      let foreign = directory.appendingPathComponent("other.kilncache.tmp-\(getpid())")
      for file in leftovers + [foreign] { try Data("partial".utf8).write(to: file) }
      let cache = try Self.load(directory)
      for file in leftovers { #expect(!FileManager.default.fileExists(atPath: file.path), "\(file.lastPathComponent)") }
      #expect(FileManager.default.fileExists(atPath: foreign.path))  // another cache's
      for step in 0..<300 { cache["a"] = Article(id: step, title: String(repeating: "t", count: 1_000)) }
      try await cache.flush()
      #expect(await cache.journalSize < 2_000)  // compacted through a temporary file
      #expect(try Self.load(directory)["a"]?.id == 299)
    }
  }

  @Test("with powerLoss, creating the journal syncs its directory; appending to it does not")
  func directorySyncs() async throws {
    try await withTemporaryDirectory { directory in
      let cache = try Cache.load(
        name: "articles", directory: directory, entryLifetime: nil, writeDelay: .seconds(1), durability: .powerLoss)
      // Whether the journal existed at each sync of the directory.
      let synced = Recorder<Bool>()
      await cache.useDirectorySync { [fileURL = cache.fileURL] _ in
        synced.append(FileManager.default.fileExists(atPath: fileURL.path))
      }
      cache["a"] = Article(id: 1, title: "a")
      try await cache.flush()  // creates the journal
      #expect(synced.values == [true])
      cache["b"] = Article(id: 2, title: "b")
      try await cache.flush()  // appends
      #expect(synced.values == [true])
      #expect(try Self.load(directory).count == 2)
    }
  }

  @Test("it is a KeyValueStore")
  func keyValueStore() async throws {
    try await withTemporaryDirectory { directory in
      let store: any KeyValueStore<String, Article> = try Self.load(directory)
      try await store.setValue(Article(id: 1, title: "a"), forKey: "a", expiresAt: nil)
      #expect(try await store.value(forKey: "a") == Article(id: 1, title: "a"))
      try await store.removeValue(forKey: "a")
      #expect(try await store.entry(forKey: "a") == nil)
      try await store.removeAll()
    }
  }
}
