import CKilnSQLite
import Foundation
import KilnTesting
import Testing

@testable import KilnStorage

@Suite("SQLiteStore", .timeLimit(.minutes(2)))
struct SQLiteStoreTests {
  @Test("values round-trip, and a new store on the file reads them")
  func roundTripAndRestart() async throws {
    try await withTemporaryDirectory { directory in
      let url = directory.appendingPathComponent("cache.sqlite")
      let now = ManualDate()
      let store = try SQLiteStore<String, Article>(url: url, now: now.provider)
      try await store.setValue(Article(id: 1, title: "one"), forKey: "a")
      try await store.setValue(Article(id: 2, title: "two"), forKey: "b")
      try await store.setValue(Article(id: 3, title: "three"), forKey: "a")
      #expect(try await store.entry(forKey: "a") == CacheEntry(value: Article(id: 3, title: "three"), storedAt: now()))
      #expect(try await store.value(forKey: "missing") == nil)
      await store.close()

      let reopened = try SQLiteStore<String, Article>(url: url)
      #expect(try await reopened.value(forKey: "a") == Article(id: 3, title: "three"))
      #expect(try await reopened.count == 2)
      try await reopened.removeValue(forKey: "a")
      #expect(try await reopened.value(forKey: "a") == nil)
    }
  }

  @Test("connections opening a new database at the same instant all succeed")
  func simultaneousOpening() async throws {
    // Switching a new database to WAL needs an exclusive lock; SQLite reports a lost race
    // for it as "database is locked" at once, without waiting. Opening must retry instead.
    try await withTemporaryDirectory { directory in
      for round in 0..<100 {
        let url = directory.appendingPathComponent("fresh-\(round).sqlite")
        let openers = 4
        let start = DispatchSemaphore(value: 0)
        let finished = DispatchGroup()
        let failures = Recorder<String>()
        let stores = Recorder<SQLiteStore<String, Int>>()
        // One thread per opener (not the cooperative pool, which has as many threads as
        // cores), all released together so they race for the new file.
        for _ in 0..<openers {
          finished.enter()
          Thread.detachNewThread {
            start.wait()
            do {
              stores.append(try SQLiteStore<String, Int>(url: url))
            } catch {
              failures.append("\(error)")
            }
            finished.leave()
          }
        }
        for _ in 0..<openers { start.signal() }
        await withCheckedContinuation { continuation in
          finished.notify(queue: .global()) { continuation.resume() }
        }
        #expect(failures.values.isEmpty, "round \(round): \(failures.values)")
        for store in stores.values { await store.close() }
      }
    }
  }

  @Test(
    "hostile keys are plain blobs",
    arguments: ["", "'; DROP TABLE kiln_cache; --", "nul\0byte", "🔥", String(repeating: "k", count: 10_240)])
  func hostileKeys(key: String) async throws {
    try await withTemporaryDirectory { directory in
      let store = try SQLiteStore<String, String>(url: directory.appendingPathComponent("db.sqlite"))
      try await store.setValue("v", forKey: key)
      try await store.setValue("other", forKey: key + "x")
      #expect(try await store.value(forKey: key) == "v")
      #expect(try await store.count == 2)
    }
  }

  @Test("empty values are stored as empty, not as NULL")
  func emptyValues() async throws {
    try await withTemporaryDirectory { directory in
      let store = try SQLiteStore<String, Data>(url: directory.appendingPathComponent("db.sqlite"))
      try await store.setValue(Data(), forKey: "empty")
      #expect(try await store.value(forKey: "empty") == Data())
    }
  }

  @Test("entries expire on the injected clock; removeExpired deletes the expired rows")
  func expiry() async throws {
    try await withTemporaryDirectory { directory in
      let now = ManualDate()
      let store = try SQLiteStore<String, Int>(
        url: directory.appendingPathComponent("db.sqlite"), entryLifetime: .seconds(60), now: now.provider)
      try await store.setValue(1, forKey: "a")
      try await store.setValue(2, forKey: "b", expiresAt: now() + 600)
      try await store.setValue(3, forKey: "c", expiresAt: .distantFuture)
      #expect(try await store.entry(forKey: "a")?.expiresAt == now() + 60)
      now.advance(by: .seconds(60))
      #expect(try await store.value(forKey: "a") == 1)
      now.advance(by: .seconds(1))
      #expect(try await store.value(forKey: "a") == nil)
      #expect(try await store.count == 2)
      now.advance(by: .seconds(600))
      #expect(try await store.removeExpired() == 2)
      #expect(try await store.count == 1)
    }
  }

  @Test("a batch is one transaction: with a value that cannot be encoded, nothing is written")
  func batchIsAllOrNothing() async throws {
    try await withTemporaryDirectory { directory in
      let store = try SQLiteStore<String, Double>(
        url: directory.appendingPathComponent("db.sqlite"), keyCodec: .automatic, valueCodec: .json())
      try await store.setValues([("a", 1), ("b", 2)])
      await #expect {
        try await store.setValues([("c", 3), ("d", .nan), ("e", 5)])
      } throws: { error in
        guard case SQLiteStoreError.valueEncodingFailed = error else { return false }
        return true
      }
      #expect(try await store.count == 2)
      #expect(try await store.value(forKey: "c") == nil)
    }
  }

  @Test(
    "table names that are not plain identifiers are rejected",
    arguments: ["", "1table", "a b", "x\"; DROP TABLE y; --", "naïve", String(repeating: "t", count: 65)])
  func invalidTableNames(name: String) async throws {
    try await withTemporaryDirectory { directory in
      #expect {
        _ = try SQLiteStore<String, Int>(url: directory.appendingPathComponent("db.sqlite"), table: name)
      } throws: { error in
        guard case SQLiteStoreError.invalidTableName(let rejected) = error else { return false }
        return rejected == name
      }
    }
  }

  @Test("two stores with different tables share a file without touching each other")
  func tablesAreIndependent() async throws {
    try await withTemporaryDirectory { directory in
      let url = directory.appendingPathComponent("db.sqlite")
      let first = try SQLiteStore<String, Int>(url: url, table: "first")
      let second = try SQLiteStore<String, Int>(url: url, table: "second")
      try await first.setValue(1, forKey: "k")
      try await second.setValue(2, forKey: "k")
      try await first.removeAll()
      #expect(try await first.value(forKey: "k") == nil)
      #expect(try await second.value(forKey: "k") == 2)
    }
  }

  @Test("a file that is not a database is a typed error and is left untouched")
  func notADatabase() async throws {
    try await withTemporaryDirectory { directory in
      let url = directory.appendingPathComponent("notes.sqlite")
      let contents = Data(String(repeating: "these are my notes, not a database. ", count: 200).utf8)
      try contents.write(to: url)
      #expect {
        _ = try SQLiteStore<String, Int>(url: url)
      } throws: { error in
        guard case SQLiteStoreError.notADatabase = error else { return false }
        return true
      }
      #expect(try Data(contentsOf: url) == contents)
    }
  }

  @Test("a missing directory is an open error")
  func missingDirectory() async throws {
    try await withTemporaryDirectory { directory in
      #expect {
        _ = try SQLiteStore<String, Int>(url: directory.appendingPathComponent("missing/db.sqlite"))
      } throws: { error in
        guard case SQLiteStoreError.openFailed = error else { return false }
        return true
      }
    }
  }

  @Test("a closed store throws closed")
  func closed() async throws {
    try await withTemporaryDirectory { directory in
      let store = try SQLiteStore<String, Int>(url: directory.appendingPathComponent("db.sqlite"))
      try await store.setValue(1, forKey: "a")
      await store.close()
      await #expect {
        _ = try await store.value(forKey: "a")
      } throws: { error in
        guard case SQLiteStoreError.closed = error else { return false }
        return true
      }
      await #expect {
        try await store.setValue(2, forKey: "a")
      } throws: { error in
        guard case SQLiteStoreError.closed = error else { return false }
        return true
      }
    }
  }

  @Test("a write waits for another connection's lock up to the busy timeout, then fails as busy")
  func busyTimeout() async throws {
    try await withTemporaryDirectory { directory in
      let url = directory.appendingPathComponent("db.sqlite")
      let store = try SQLiteStore<String, Int>(url: url, busyTimeout: .milliseconds(50))
      let blocker = try SQLiteConnection(path: url.path, readOnly: false, busyTimeout: .zero)
      try blocker.execute("BEGIN IMMEDIATE")
      await #expect {
        try await store.setValue(1, forKey: "a")
      } throws: { error in
        guard case SQLiteStoreError.busy = error else { return false }
        return true
      }
      #expect(try await store.value(forKey: "a") == nil)  // reads never wait in WAL mode
      try blocker.execute("ROLLBACK")
      try await store.setValue(1, forKey: "a")
      #expect(try await store.value(forKey: "a") == 1)
    }
  }

  @Test("checkpoint truncates the write-ahead log")
  func checkpointTruncates() async throws {
    try await withTemporaryDirectory { directory in
      let url = directory.appendingPathComponent("db.sqlite")
      let store = try SQLiteStore<String, Int>(url: url)
      for index in 0..<50 { try await store.setValue(index, forKey: "k\(index)") }
      #expect(try Self.walSize(url) > 0)
      try await store.checkpoint()
      #expect(try Self.walSize(url) == 0)
    }
  }

  @Test("checkpoint fails as busy when a reader keeps it from completing, and succeeds once it is done")
  func checkpointBlockedByReader() async throws {
    try await withTemporaryDirectory { directory in
      let url = directory.appendingPathComponent("db.sqlite")
      let store = try SQLiteStore<String, Int>(url: url, busyTimeout: .milliseconds(50))
      for index in 0..<50 { try await store.setValue(index, forKey: "k\(index)") }
      // Another process's long read: a snapshot older than the next write.
      let reader = try SQLiteConnection(path: url.path, readOnly: true, busyTimeout: .zero)
      try reader.execute("BEGIN")
      let statement = try reader.statement("SELECT COUNT(*) FROM kiln_cache")
      #expect(try statement.step())
      try await store.setValue(99, forKey: "after")
      await #expect {
        try await store.checkpoint()
      } throws: { error in
        guard case SQLiteStoreError.busy = error else { return false }
        return true
      }
      #expect(try Self.walSize(url) > 0)
      statement.reset()
      try reader.execute("COMMIT")
      try await store.checkpoint()
      #expect(try Self.walSize(url) == 0)
      #expect(try await store.value(forKey: "after") == 99)
    }
  }

  @Test("a database that stays out of WAL mode is a typed error, not a silent rollback journal")
  func walRefused() throws {
    // An in-memory database answers `memory` to `PRAGMA journal_mode = WAL`.
    let memory = try SQLiteConnection(path: ":memory:", readOnly: false, busyTimeout: .zero)
    #expect {
      try memory.enableWAL(retryingWhileBusyFor: .milliseconds(50))
    } throws: { error in
      guard case SQLiteStoreError.walUnavailable(path: ":memory:", journalMode: "memory") = error else { return false }
      return true
    }
  }

  @Test("a new database file is switched to WAL mode")
  func walEnabled() async throws {
    try await withTemporaryDirectory { directory in
      let url = directory.appendingPathComponent("db.sqlite")
      _ = try SQLiteStore<String, Int>(url: url)
      let connection = try SQLiteConnection(path: url.path, readOnly: true, busyTimeout: .zero)
      let statement = try connection.statement("PRAGMA journal_mode")
      #expect(try statement.step())
      #expect(statement.text(at: 0) == "wal")
      statement.reset()
    }
  }

  @Test("a blob past SQLite's length limit is a typed error, not a trap or a bare SQLite code")
  func blobTooLarge() throws {
    let connection = try SQLiteConnection(path: ":memory:", readOnly: false, busyTimeout: .zero)
    // Stands in for blobs of 2 GiB and more, whose length no longer fits SQLite's 32-bit API.
    sqlite3_limit(connection.handle, SQLITE_LIMIT_LENGTH, 1_000)
    try connection.execute("CREATE TABLE t (v BLOB)")
    let statement = try connection.statement("INSERT INTO t (v) VALUES (?1)")
    #expect {
      try statement.bind(Data(count: 1_001), at: 1)
    } throws: { error in
      guard case SQLiteStoreError.entryTooLarge(size: 1_001, limit: 1_000) = error else { return false }
      return true
    }
    try statement.bind(Data(count: 900), at: 1)
    #expect(try !statement.step())
    statement.reset()
  }

  @Test("a row past SQLite's length limit is the same typed error when it is written")
  func rowTooLarge() async throws {
    try await withTemporaryDirectory { directory in
      let url = directory.appendingPathComponent("db.sqlite")
      let store = try SQLiteStore<String, Data>(url: url)
      let connection = try SQLiteConnection(path: url.path, readOnly: false, busyTimeout: .seconds(1))
      sqlite3_limit(connection.handle, SQLITE_LIMIT_LENGTH, 1_000)
      let writer = SQLiteWriter(connection: connection, table: "kiln_cache")
      // Each blob fits; the row (with its record header) does not.
      await #expect {
        try await writer.write([(Data("k".utf8), Data(count: 999))], storedAt: 0, expiresAt: nil, now: 0)
      } throws: { error in
        guard case SQLiteStoreError.entryTooLarge(size: 1_000, limit: 1_000) = error else { return false }
        return true
      }
      try await writer.write([(Data("k".utf8), Data(count: 900))], storedAt: 0, expiresAt: nil, now: 0)
      #expect(try await store.count == 1)
    }
  }

  static func walSize(_ database: URL) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: database.path + "-wal")
    return try #require(attributes[.size] as? Int)
  }

  @Test("a cancelled task writes nothing")
  func cancelledWrite() async throws {
    try await withTemporaryDirectory { directory in
      let store = try SQLiteStore<String, Int>(url: directory.appendingPathComponent("db.sqlite"))
      let gate = Gate()
      let write = Task {
        try? await gate.wait()
        try await store.setValue(1, forKey: "k")
      }
      write.cancel()
      gate.open()
      await #expect(throws: CancellationError.self) { try await write.value }
      #expect(try await store.count == 0)
    }
  }

  @Test("a row whose value no longer decodes reads as a miss")
  func undecodableValue() async throws {
    try await withTemporaryDirectory { directory in
      let url = directory.appendingPathComponent("db.sqlite")
      let strings = try SQLiteStore<String, String>(url: url)
      try await strings.setValue("text", forKey: "k")
      let articles = try SQLiteStore<String, Article>(url: url)
      #expect(try await articles.value(forKey: "k") == nil)
    }
  }

  @Test("many tasks writing and reading at once lose nothing")
  func concurrentTasks() async throws {
    try await withTemporaryDirectory { directory in
      let store = try SQLiteStore<String, Int>(url: directory.appendingPathComponent("db.sqlite"))
      try await withThrowingTaskGroup(of: Void.self) { group in
        for worker in 0..<8 {
          group.addTask {
            for index in 0..<50 {
              try await store.setValue(index, forKey: "w\(worker)-\(index)")
              #expect(try await store.value(forKey: "w\(worker)-\(index)") == index)
            }
          }
        }
        try await group.waitForAll()
      }
      #expect(try await store.count == 400)
      try await store.checkpoint()
    }
  }
}
