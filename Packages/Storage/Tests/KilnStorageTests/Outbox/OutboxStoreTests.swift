import CKilnSQLite
import Foundation
import KilnTesting
import Testing

@testable import KilnStorage

/// The behaviour every ``OutboxStore`` promises, run against every store (PostgreSQL's with the
/// `PostgreSQL` trait), then what only the SQLite store can show: reopening, damaged bytes on
/// disk, a full database, sharing a file. `PostgresOutboxStoreTests` has PostgreSQL's own.
@Suite("Outbox stores", .timeLimit(.minutes(2)))
struct OutboxStoreTests {
  enum Kind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory, sqlite
    #if PostgreSQL
      case postgres
    #endif
    var testDescription: String { rawValue }
  }

  /// Runs `body` with a new, empty store of `kind` (in a temporary directory for SQLite).
  static func withStore(_ kind: Kind, _ body: (any OutboxStore) async throws -> Void) async throws {
    switch kind {
    case .memory:
      try await body(MemoryOutboxStore())
    case .sqlite:
      try await withTemporaryDirectory { directory in
        try await body(try SQLiteOutboxStore(url: directory.appendingPathComponent("outbox.sqlite")))
      }
    #if PostgreSQL
      case .postgres:
        try await PostgresTestDatabase.withClient { client in
          try await body(try await PostgresOutboxStore(client: client, table: PostgresTestDatabase.tableName()))
        }
    #endif
    }
  }

  /// A record whose key is a function of its content: the same arguments make an equal record.
  static func record(_ scope: String, _ change: String, channel: String = "notes") -> OutboxRecord {
    OutboxRecord(
      channel: channel, scope: Data(scope.utf8), param: Data("param:\(scope)".utf8), change: Data(change.utf8),
      idempotencyKey: key(for: "\(channel)|\(scope)|\(change)"),
      enqueuedAt: Date(timeIntervalSinceReferenceDate: 800_000_000))
  }

  /// Two 64-bit FNV-1a hashes of `text` as a key.
  static func key(for text: String) -> IdempotencyKey {
    var halves: [UInt64] = [0xcbf2_9ce4_8422_2325, 0x8422_2325_cbf2_9ce4]
    for index in halves.indices {
      for byte in text.utf8 { halves[index] = (halves[index] ^ UInt64(byte)) &* 0x100_0000_01b3 }
    }
    let bytes = halves.flatMap { half in withUnsafeBytes(of: half.littleEndian) { Array($0) } }
    return IdempotencyKey(bytes: bytes)!
  }

  /// Whether `store`'s sender lock is granted (and released again) within `attempts` tries,
  /// `interval` apart: a lock given back asynchronously is free a moment later.
  static func locksSoon(
    _ store: any SenderLockingOutboxStore, attempts: Int, every interval: Duration
  ) async throws -> Bool {
    for _ in 0..<attempts {
      if case .acquired(let lease) = try await store.lockSender() {
        await lease.release()
        return true
      }
      try await Task.sleep(for: interval)
    }
    return false
  }

  static func entries(_ loads: [OutboxLoad]) -> [OutboxEntry] {
    loads.compactMap { load in
      guard case .entry(let entry) = load else { return nil }
      return entry
    }
  }

  // MARK: - Every store

  @Test("appended records load back in order with growing sequence numbers", arguments: Kind.allCases)
  func appendAndLoad(kind: Kind) async throws {
    try await Self.withStore(kind) { store in
      let records = [Self.record("a", "one"), Self.record("b", "two"), Self.record("a", "three")]
      var sequences: [UInt64] = []
      for record in records { sequences.append(try await store.append(record)) }
      #expect(sequences == sequences.sorted() && Set(sequences).count == 3)
      let loaded = Self.entries(try await store.loadAll())
      #expect(loaded.map(\.sequence) == sequences)
      #expect(loaded.map(\.record) == records)
      #expect(loaded.allSatisfy { $0.attempts == 0 && $0.lastError == nil })
    }
  }

  @Test("a sequence number is never reused, even after the last entry is removed", arguments: Kind.allCases)
  func sequencesNeverReused(kind: Kind) async throws {
    try await Self.withStore(kind) { store in
      let first = try await store.append(Self.record("a", "1"))
      let second = try await store.append(Self.record("a", "2"))
      try await store.remove([second])
      let third = try await store.append(Self.record("a", "3"))
      #expect(third > second && second > first)
    }
  }

  @Test("appending the same record again returns its entry and writes nothing", arguments: Kind.allCases)
  func idempotentAppend(kind: Kind) async throws {
    try await Self.withStore(kind) { store in
      let record = Self.record("a", "one")
      let sequence = try await store.append(record)
      #expect(try await store.append(record) == sequence)
      #expect(try await store.loadAll().count == 1)
    }
  }

  @Test("another record with a stored key is a key conflict and writes nothing", arguments: Kind.allCases)
  func keyConflict(kind: Kind) async throws {
    try await Self.withStore(kind) { store in
      let record = Self.record("a", "one")
      _ = try await store.append(record)
      var changed = record
      changed.change = Data("another".utf8)
      let error = await #expect(throws: OutboxStoreError.self) { _ = try await store.append(changed) }
      guard case .keyConflict(let key)? = error else {
        Issue.record("\(String(describing: error))")
        return
      }
      #expect(key == record.idempotencyKey)
      #expect(Self.entries(try await store.loadAll()).map(\.record) == [record])
    }
  }

  @Test("replace keeps the position, takes the new record and starts the attempts again", arguments: Kind.allCases)
  func replace(kind: Kind) async throws {
    try await Self.withStore(kind) { store in
      let first = try await store.append(Self.record("a", "1"))
      let second = try await store.append(Self.record("a", "2"))
      try await store.recordFailure(first, attempts: 3, error: "503")
      let replacement = Self.record("a", "1 resolved")
      try await store.replace(first, with: replacement)
      let loaded = Self.entries(try await store.loadAll())
      #expect(loaded.map(\.sequence) == [first, second])
      #expect(loaded[0].record == replacement)
      #expect(loaded[0].attempts == 0 && loaded[0].lastError == nil)

      let missing = await #expect(throws: OutboxStoreError.self) {
        try await store.replace(999, with: Self.record("a", "x"))
      }
      guard case .notFound(let sequence)? = missing else {
        Issue.record("\(String(describing: missing))")
        return
      }
      #expect(sequence == 999)
      // The key of the second entry cannot be taken by the first.
      let taken = await #expect(throws: OutboxStoreError.self) {
        try await store.replace(first, with: loaded[1].record)
      }
      guard case .keyConflict? = taken else {
        Issue.record("\(String(describing: taken))")
        return
      }
      #expect(Self.entries(try await store.loadAll()).map(\.record) == [replacement, loaded[1].record])
    }
  }

  @Test("failures are recorded per entry; an unknown entry is not found", arguments: Kind.allCases)
  func recordFailure(kind: Kind) async throws {
    try await Self.withStore(kind) { store in
      let sequence = try await store.append(Self.record("a", "1"))
      try await store.recordFailure(sequence, attempts: 2, error: "HTTP 503")
      let entry = try #require(Self.entries(try await store.loadAll()).first)
      #expect(entry.attempts == 2 && entry.lastError == "HTTP 503")
      let error = await #expect(throws: OutboxStoreError.self) {
        try await store.recordFailure(sequence + 1, attempts: 1, error: "x")
      }
      guard case .notFound(let missing)? = error else {
        Issue.record("\(String(describing: error))")
        return
      }
      #expect(missing == sequence + 1)
    }
  }

  @Test("remove takes a batch and ignores unknown sequences", arguments: Kind.allCases)
  func remove(kind: Kind) async throws {
    try await Self.withStore(kind) { store in
      var sequences: [UInt64] = []
      for index in 0..<5 { sequences.append(try await store.append(Self.record("s", "\(index)"))) }
      try await store.remove([sequences[0], sequences[2], 12_345])
      try await store.remove([])
      #expect(try await store.loadAll().map(\.sequence) == [sequences[1], sequences[3], sequences[4]])
    }
  }

  @Test("quarantine moves an entry out of the log with its reason and date", arguments: Kind.allCases)
  func quarantine(kind: Kind) async throws {
    try await Self.withStore(kind) { store in
      let keep = try await store.append(Self.record("a", "keep"))
      let bad = try await store.append(Self.record("b", "bad"))
      try await store.quarantine(bad, reason: "rejected by hand")
      #expect(try await store.loadAll().map(\.sequence) == [keep])
      let quarantined = try await store.quarantined()
      #expect(quarantined.map(\.sequence) == [bad])
      #expect(quarantined.first?.reason == "rejected by hand")
      #expect(quarantined.first?.channel == "notes")
      #expect(quarantined.first?.param == Data("param:b".utf8))
      #expect(quarantined.first.map { OutboxEnvelope.decode($0.storedBytes) } == .success(Self.record("b", "bad")))
      let error = await #expect(throws: OutboxStoreError.self) { try await store.quarantine(bad, reason: "again") }
      guard case .notFound? = error else {
        Issue.record("\(String(describing: error))")
        return
      }
    }
  }

  @Test("an empty or over-long channel is refused and nothing is written", arguments: Kind.allCases)
  func invalidChannel(kind: Kind) async throws {
    try await Self.withStore(kind) { store in
      for channel in ["", String(repeating: "c", count: 256), "no\0tes"] {
        let error = await #expect(throws: OutboxStoreError.self) {
          _ = try await store.append(Self.record("a", "1", channel: channel))
        }
        guard case .invalidChannel(let refused)? = error else {
          Issue.record("\(String(describing: error))")
          return
        }
        #expect(refused == channel)
      }
      _ = try await store.append(Self.record("a", "1", channel: String(repeating: "é", count: 127)))
      #expect(try await store.loadAll().count == 1)
    }
  }

  @Test("thousands of concurrent appends each get their own entry, in sequence order", arguments: Kind.allCases)
  func concurrentAppends(kind: Kind) async throws {
    try await Self.withStore(kind) { store in
      let count = 2_000
      let sequences = try await withThrowingTaskGroup(of: (Int, UInt64).self) { group in
        for index in 0..<count {
          group.addTask { (index, try await store.append(Self.record("s\(index % 16)", "\(index)"))) }
        }
        var sequences: [Int: UInt64] = [:]
        for try await (index, sequence) in group { sequences[index] = sequence }
        return sequences
      }
      #expect(Set(sequences.values).count == count)
      let loaded = Self.entries(try await store.loadAll())
      #expect(loaded.count == count)
      #expect(loaded.map(\.sequence) == loaded.map(\.sequence).sorted())
      for entry in loaded {
        let index = try #require(Int(String(decoding: entry.record.change, as: UTF8.self)))
        #expect(sequences[index] == entry.sequence)
      }
    }
  }

  @Test(
    "one sender at a time: a second lock is refused while the first lease lives, granted once released",
    arguments: Kind.allCases)
  func senderLock(kind: Kind) async throws {
    try await Self.withStore(kind) { store in
      let store = try #require(store as? any SenderLockingOutboxStore)
      guard case .acquired(let lease) = try await store.lockSender() else {
        Issue.record("the first lock of a new store should be granted")
        return
      }
      guard case .held(let holder) = try await store.lockSender() else {
        Issue.record("a second lock should be refused while the first is held")
        return
      }
      #expect(!holder.isEmpty)
      await lease.release()
      #expect(lease.isReleased)
      await lease.release()  // a second release does nothing
      guard case .acquired(let again) = try await store.lockSender() else {
        Issue.record("the lock should be free once released")
        return
      }
      // A lease let go without release() gives the lock back too, a moment later.
      _ = consume again
      #expect(
        try await Self.locksSoon(store, attempts: 500, every: .milliseconds(10)),
        "the lock should be free once its lease is gone")
    }
  }

  // MARK: - SQLite

  @Test("the sender lock of a SQLite file is held by another process, named by its ID, until it is killed")
  func senderLockAcrossProcesses() async throws {
    try await withTemporaryDirectory { directory in
      let url = directory.appendingPathComponent("outbox.sqlite")
      let store = try SQLiteOutboxStore(url: url)
      let holder = try ChildProcess(
        executable: try CrashWriter.locate(), arguments: ["outbox", url.path, "hold-sender-lock", "-", "0"])
      #expect(try await holder.nextLine() == "locked")
      guard case .held(let description) = try await store.lockSender() else {
        Issue.record("the lock held by the child should be refused")
        holder.kill()
        return
      }
      #expect(description == "process \(holder.pid)")
      holder.kill()
      _ = holder.wait()
      guard case .acquired(let lease) = try await store.lockSender() else {
        Issue.record("the lock of a killed process should be free")
        return
      }
      // Another store on the file, in this process, while this one holds it: refused too.
      guard case .held(let mine) = try await SQLiteOutboxStore(url: url).lockSender() else {
        Issue.record("a second store on the file should be refused")
        return
      }
      #expect(mine == "process \(getpid()) (this one)")
      #expect(FileManager.default.fileExists(atPath: store.senderLockURL.path))
      await lease.release()
    }
  }

  @Test("entries, attempts and the quarantine survive reopening the file; sequences go on growing")
  func reopen() async throws {
    try await withTemporaryDirectory { directory in
      let url = directory.appendingPathComponent("outbox.sqlite")
      let now = ManualDate()
      let store = try SQLiteOutboxStore(url: url, now: now.provider)
      let first = try await store.append(Self.record("a", "1"))
      let second = try await store.append(Self.record("b", "2"))
      let third = try await store.append(Self.record("c", "3"))
      try await store.recordFailure(first, attempts: 4, error: "timed out")
      try await store.quarantine(second, reason: "test")
      try await store.remove([third])
      await store.close()
      let closed = await #expect(throws: OutboxStoreError.self) { _ = try await store.loadAll() }
      guard case .closed? = closed else {
        Issue.record("\(String(describing: closed))")
        return
      }

      let reopened = try SQLiteOutboxStore(url: url)
      let loaded = Self.entries(try await reopened.loadAll())
      #expect(loaded.map(\.sequence) == [first])
      #expect(loaded.first?.attempts == 4 && loaded.first?.lastError == "timed out")
      #expect(loaded.first?.record == Self.record("a", "1"))
      let quarantined = try await reopened.quarantined()
      #expect(quarantined.map(\.sequence) == [second])
      #expect(quarantined.first?.quarantinedAt == now())
      // The keys of the stored entries are known again: the same record is not appended twice.
      #expect(try await reopened.append(Self.record("a", "1")) == first)
      var conflicting = Self.record("a", "1")
      conflicting.change = Data("other".utf8)
      let conflict = await #expect(throws: OutboxStoreError.self) { _ = try await reopened.append(conflicting) }
      guard case .keyConflict? = conflict else {
        Issue.record("\(String(describing: conflict))")
        return
      }
      #expect(try await reopened.append(Self.record("d", "4")) > third)
    }
  }

  @Test("a byte flipped on disk inside one record loads as damaged; the others load intact")
  func damagedBytesOnDisk() async throws {
    try await withTemporaryDirectory { directory in
      let url = directory.appendingPathComponent("outbox.sqlite")
      let marker = "CHANGE-OF-THE-SECOND-RECORD-" + String(repeating: "x", count: 64)
      let store = try SQLiteOutboxStore(url: url)
      let first = try await store.append(Self.record("a", "first"))
      let second = try await store.append(Self.record("b", marker))
      let third = try await store.append(Self.record("c", "third"))
      try await store.checkpoint()
      await store.close()

      // Damage the second record's change where it lies in the database file.
      var bytes = try Data(contentsOf: url)
      let range = try #require(bytes.firstRange(of: Data(marker.utf8)))
      bytes[range.lowerBound + 40] ^= 0x20
      try bytes.write(to: url)

      let reopened = try SQLiteOutboxStore(url: url)
      let loads = try await reopened.loadAll()
      #expect(loads.map(\.sequence) == [first, second, third])
      #expect(Self.entries(loads).map(\.sequence) == [first, third])
      guard case .damaged(let damage) = loads[1] else {
        Issue.record("the damaged record loaded: \(loads[1])")
        return
      }
      #expect(damage.channel == "notes")
      #expect(damage.param == Data("param:b".utf8))
      #expect(damage.reason.contains("checksum"))
      try await reopened.quarantine(second, reason: damage.reason)
      #expect(Self.entries(try await reopened.loadAll()).map(\.sequence) == [first, third])
      #expect(try await reopened.quarantined().map(\.sequence) == [second])
    }
  }

  @Test(
    "a record that disagrees with its columns, is truncated or is not an envelope loads as damaged",
    arguments: [
      ("UPDATE kiln_outbox SET param = x'00' WHERE seq = 1", "disagrees"),
      ("UPDATE kiln_outbox SET record = substr(record, 1, 20) WHERE seq = 1", "truncated"),
      ("UPDATE kiln_outbox SET record = x'00' WHERE seq = 1", "truncated"),
      ("UPDATE kiln_outbox SET record = randomblob(200) WHERE seq = 1", "checksum"),
    ])
  func damagedRows(statement: String, reason: String) async throws {
    try await withTemporaryDirectory { directory in
      let url = directory.appendingPathComponent("outbox.sqlite")
      let store = try SQLiteOutboxStore(url: url)
      _ = try await store.append(Self.record("a", "1"))
      _ = try await store.append(Self.record("b", "2"))
      try Self.execute(statement, on: url)
      let loads = try await store.loadAll()
      guard case .damaged(let damage) = loads.first else {
        Issue.record("loaded \(String(describing: loads.first))")
        return
      }
      #expect(damage.sequence == 1)
      #expect(damage.reason.contains(reason))
      #expect(Self.entries(loads).map(\.record) == [Self.record("b", "2")])
    }
  }

  @Test("a full database refuses an append with storageFull and keeps every earlier entry")
  func storageFull() async throws {
    try await withTemporaryDirectory { directory in
      let url = directory.appendingPathComponent("outbox.sqlite")
      let store = try SQLiteOutboxStore(url: url, maximumBytes: 96 * 1_024)
      var appended: [OutboxRecord] = []
      var refused: OutboxRecord?
      for index in 0..<1_000 {
        let record = Self.record("s", "\(index)-" + String(repeating: "z", count: 1_024))
        do throws(OutboxStoreError) {
          _ = try await store.append(record)
          appended.append(record)
        } catch {
          guard case .storageFull = error else { throw error }
          refused = record
          break
        }
      }
      let full = try #require(refused, "96 KB held 1,000 records of 1 KB")
      #expect(appended.count > 10)
      await store.close()

      let reopened = try SQLiteOutboxStore(url: url)
      let loaded = Self.entries(try await reopened.loadAll())
      #expect(loaded.map(\.record) == appended)
      #expect(!loaded.contains { $0.record.idempotencyKey == full.idempotencyKey })
      // Without the limit, the refused write goes in.
      _ = try await reopened.append(full)
    }
  }

  @Test("an outbox shares a file with an SQLiteStore; a file that is not a database is left untouched")
  func sharingAndBadFiles() async throws {
    try await withTemporaryDirectory { directory in
      let url = directory.appendingPathComponent("kiln.sqlite")
      let cache = try SQLiteStore<String, String>(url: url)
      let outbox = try SQLiteOutboxStore(url: url)
      try await cache.setValue("cached", forKey: "k")
      _ = try await outbox.append(Self.record("a", "1"))
      #expect(try await cache.value(forKey: "k") == "cached")
      #expect(try await outbox.loadAll().count == 1)

      let notes = directory.appendingPathComponent("notes.sqlite")
      let contents = Data(String(repeating: "not a database. ", count: 400).utf8)
      try contents.write(to: notes)
      #expect {
        _ = try SQLiteOutboxStore(url: notes)
      } throws: { error in
        guard case SQLiteStoreError.notADatabase = error else { return false }
        return true
      }
      #expect(try Data(contentsOf: notes) == contents)
      for table in ["kiln outbox", "x\"; DROP TABLE kiln_cache; --", "", String(repeating: "t", count: 54)] {
        #expect(throws: SQLiteStoreError.self) { _ = try SQLiteOutboxStore(url: url, table: table) }
      }
    }
  }

  // MARK: - Envelope

  @Test("an envelope round-trips, and a change to any one of its bytes is detected")
  func envelopeDetectsEveryByte() throws {
    let record = Self.record("scope", "a change of a few bytes")
    let envelope = try OutboxEnvelope.encode(record)
    #expect(OutboxEnvelope.decode(envelope) == .success(record))
    for index in envelope.indices {
      for flip: UInt8 in [0x01, 0x80, 0xFF] {
        var damaged = envelope
        damaged[index] ^= flip
        guard case .failure = OutboxEnvelope.decode(damaged) else {
          Issue.record("flipping byte \(index) with \(flip) went unnoticed")
          return
        }
      }
    }
    for length in [0, 1, OutboxEnvelope.overhead - 1, envelope.count - 1] {
      guard case .failure = OutboxEnvelope.decode(envelope.prefix(length)) else {
        Issue.record("\(length) bytes of \(envelope.count) decoded")
        return
      }
    }
  }

  /// Runs `sql` on the database at `url` through a connection of its own.
  static func execute(_ sql: String, on url: URL) throws {
    var handle: OpaquePointer?
    guard sqlite3_open(url.path, &handle) == SQLITE_OK, let handle else { throw CocoaError(.fileReadUnknown) }
    defer { sqlite3_close(handle) }
    sqlite3_busy_timeout(handle, 5_000)
    guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else {
      throw CocoaError(
        .fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: String(cString: sqlite3_errmsg(handle))])
    }
  }
}
