public import Foundation
import _KilnSynchronization

/// A named in-memory cache that survives restarts: every insert, update and removal is
/// persisted to an append-only journal (Loadability's `SerializableCache`, made durable).
///
/// ```swift
/// let cache = try SerializableCache<String, Profile>.load(name: "profiles")
/// cache["me"] = profile            // in memory now, on disk within `writeDelay`
/// cache["me"] = updatedProfile     // updates persist too
/// try await cache.flush()          // on disk now
/// ```
///
/// Reads and writes are synchronous and served from memory. Changes are encoded at once
/// and queued; a writer appends the queue to the journal after ``writeDelay`` (coalescing
/// bursts into one write), or when ``flush()`` is called. Each change costs O(1) amortised:
/// the journal is rewritten to a snapshot of the live entries — through a temporary file
/// renamed over it — only once it has grown to twice their size.
///
/// A crash at any moment loses at most the changes not yet written and never corrupts the
/// ones that were: the next ``load(name:directory:entryLifetime:countLimit:writeDelay:clock:durability:keyCodec:valueCodec:now:)``
/// keeps every complete change and cuts a torn tail.
///
/// - Important: Open each name once per process and do not share the file between
///   processes. Call ``flush()`` before the process exits (for example when an app moves to
///   the background) so the last changes are on disk.
public final class SerializableCache<Key: Hashable & Sendable, Value: Sendable>: KeyValueStore, Sendable {
  /// A value with its encoded journal record (which compaction writes out again).
  struct Stored {
    var value: Value
    var record: [UInt8]
  }

  private struct State {
    var table: LRUTable<Key, Stored>
    /// Records not yet handed to the writer.
    var pending: [UInt8] = []
    /// Set when a write failed: the next write replaces the file with a full snapshot.
    var needsSnapshot = false
    /// The first failure of a background write, reported by the next `flush()`.
    var failure: SerializableCacheError?
    var scheduledWrite: Task<Void, Never>?
  }

  /// How a damaged file was repaired when the cache was loaded.
  public struct Recovery: Hashable, Sendable {
    /// The number of bytes of a torn or corrupt tail that were cut off.
    public var discardedBytes: Int
    /// The number of records that could not be decoded with the current codecs and were
    /// skipped (their keys read as misses).
    public var undecodableRecords: Int
    /// Where an unreadable file (not a Kiln journal) was moved; `nil` when none was.
    public var setAside: URL?
  }

  /// The cache's name, as given to `load`.
  public let name: String

  /// The journal file.
  public let fileURL: URL

  /// How long an entry stored without an explicit expiry lives; `nil` for until removed.
  public let entryLifetime: Duration?

  /// How long a change may wait before it is written, so that bursts share one write.
  public let writeDelay: Duration

  /// What was repaired while loading; all zero and `nil` for an intact file.
  public let recovery: Recovery

  private let state: KilnMutex<State>
  private let writer: JournalWriter
  private let keyCodec: StoreCodec<Key>
  private let valueCodec: StoreCodec<Value>
  private let clock: any Clock<Duration>
  private let now: @Sendable () -> Date

  /// The journal may grow to twice the live data plus this before it is compacted.
  static var compactionSlack: Int { 64 << 10 }

  /// The default directory: `Kiln` under the user's caches directory.
  public static var defaultDirectory: URL {
    let caches =
      FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first
      ?? FileManager.default.temporaryDirectory
    return caches.appendingPathComponent("Kiln", isDirectory: true)
  }

  /// Loads the cache called `name` from `directory`, or creates it empty.
  ///
  /// ```swift
  /// let cache = try SerializableCache<Int, Article>.load(name: "articles", entryLifetime: .seconds(86_400))
  /// ```
  ///
  /// A torn tail (a crash during a write) is cut off; records that no longer decode (the
  /// value type changed) are skipped; a file that is not a Kiln journal is moved aside to
  /// `<name>.kilncache.corrupt` and the cache starts empty. ``recovery`` tells what happened.
  ///
  /// - Parameters:
  ///   - name: The cache's name: its file is `<name>.kilncache` in `directory`.
  ///   - directory: Where the file lives; created if missing. ``defaultDirectory`` by default.
  ///   - entryLifetime: How long entries stored without an explicit expiry live; one hour
  ///     by default (as Loadability's caches); `nil` keeps them until removed.
  ///   - countLimit: The largest number of entries; the least recently used go first.
  ///   - writeDelay: How long changes wait to be written together; 100 ms by default.
  ///   - clock: The clock of `writeDelay`.
  ///   - durability: What a completed write survives; ``Durability/processCrash`` by default.
  ///   - keyCodec: How keys become bytes.
  ///   - valueCodec: How values become bytes.
  ///   - now: The wall clock that stamps and expires entries.
  /// - Returns: The loaded cache.
  /// - Throws: ``SerializableCacheError/invalidName(_:)``, or
  ///   ``SerializableCacheError/fileSystem(_:)`` when the directory or file cannot be read.
  public static func load(
    name: String,
    directory: URL = defaultDirectory,
    entryLifetime: Duration? = .seconds(3600),
    countLimit: Int? = nil,
    writeDelay: Duration = .milliseconds(100),
    clock: any Clock<Duration> = ContinuousClock(),
    durability: Durability = .processCrash,
    keyCodec: StoreCodec<Key>,
    valueCodec: StoreCodec<Value>,
    now: @escaping @Sendable () -> Date = Date.init
  ) throws(SerializableCacheError) -> SerializableCache {
    guard !name.isEmpty, name.utf8.count <= 200, name != ".", name != "..", !name.contains("/"),
      !name.contains("\0")
    else { throw .invalidName(name) }
    precondition((countLimit ?? 0) >= 0, "SerializableCache countLimit must not be negative")
    precondition(entryLifetime.map { $0 > .zero } ?? true, "SerializableCache entryLifetime must be positive")
    precondition(writeDelay >= .zero, "SerializableCache writeDelay must not be negative")
    let directoryPath = directory.standardizedFileURL.path
    do { try POSIX.makeDirectory(directoryPath) } catch { throw .fileSystem(error) }
    let path = directoryPath + "/" + name + ".kilncache"
    // Compaction files of a process that died before renaming them, whatever its pid.
    JournalWriter.removeLeftovers(of: name + ".kilncache", in: directoryPath)

    // Replayed without the count limit: the journal records evictions as removals, and a
    // limit applied during the replay would evict in replay order instead.
    var table = LRUTable<Key, Stored>()
    var recovery = Recovery(discardedBytes: 0, undecodableRecords: 0, setAside: nil)
    var fileSize = 0
    var identity: FileIdentity?
    let contents: FileContents?
    do { contents = try POSIX.readFile(path) } catch { throw .fileSystem(error) }
    if let contents {
      if let (records, validLength) = Journal.decode(contents.bytes) {
        fileSize = validLength
        identity = contents.identity
        if validLength < contents.bytes.count {
          recovery.discardedBytes = contents.bytes.count - validLength
          do { try POSIX.truncate(path, to: validLength) } catch { throw .fileSystem(error) }
        }
        recovery.undecodableRecords = replay(records, from: contents.bytes, into: &table, keyCodec, valueCodec)
      } else if !contents.bytes.isEmpty {
        let aside = path + ".corrupt"
        do { try POSIX.rename(path, to: aside) } catch { throw .fileSystem(error) }
        recovery.setAside = URL(fileURLWithPath: aside)
      }
    }
    _ = table.removeExpired(at: now().timeIntervalSinceReferenceDate)
    table.countLimit = countLimit ?? .max
    var pending: [UInt8] = []
    for evicted in table.enforceLimits() {
      pending += Journal.removeRecord(key: Journal.key(ofSetRecord: evicted.value.record))
    }
    return SerializableCache(
      name: name, path: path, table: table, pending: pending, fileSize: fileSize, identity: identity,
      recovery: recovery,
      entryLifetime: entryLifetime,
      writeDelay: writeDelay, clock: clock, durability: durability, keyCodec: keyCodec, valueCodec: valueCodec,
      now: now)
  }

  private static func replay(
    _ records: [Journal.Record],
    from bytes: [UInt8],
    into table: inout LRUTable<Key, Stored>,
    _ keyCodec: StoreCodec<Key>,
    _ valueCodec: StoreCodec<Value>
  ) -> Int {
    var undecodable = 0
    for record in records {
      switch record {
      case .removeAll:
        _ = table.removeAll()
      case .remove(let keyRange):
        guard let key = try? keyCodec.decode(Data(bytes[keyRange])) else {
          undecodable += 1
          continue
        }
        table.remove(key)
      case .set(let keyRange, let storedAt, let expiresAt, let valueRange, let recordRange):
        guard let key = try? keyCodec.decode(Data(bytes[keyRange])) else {
          undecodable += 1
          continue
        }
        guard let value = try? valueCodec.decode(Data(bytes[valueRange])) else {
          undecodable += 1
          table.remove(key)
          continue
        }
        let record = Array(bytes[recordRange])
        _ = table.insert(
          Stored(value: value, record: record), forKey: key, cost: record.count, storedAt: storedAt,
          expiresAt: expiresAt)
      }
    }
    return undecodable
  }

  private init(
    name: String,
    path: String,
    table: sending LRUTable<Key, Stored>,
    pending: [UInt8],
    fileSize: Int,
    identity: FileIdentity?,
    recovery: Recovery,
    entryLifetime: Duration?,
    writeDelay: Duration,
    clock: any Clock<Duration>,
    durability: Durability,
    keyCodec: StoreCodec<Key>,
    valueCodec: StoreCodec<Value>,
    now: @escaping @Sendable () -> Date
  ) {
    self.name = name
    self.fileURL = URL(fileURLWithPath: path)
    self.entryLifetime = entryLifetime
    self.writeDelay = writeDelay
    self.recovery = recovery
    self.clock = clock
    self.keyCodec = keyCodec
    self.valueCodec = valueCodec
    self.now = now
    state = KilnMutex(State(table: table, pending: pending))
    writer = JournalWriter(path: path, fileSize: fileSize, identity: identity, durability: durability)
    if !pending.isEmpty { scheduleWrite() }
  }

  // MARK: - Reading

  /// The value stored under `key`, or `nil`; assigning stores (and persists) a value with
  /// the default lifetime, assigning `nil` removes it.
  ///
  /// - Important: A value the codecs cannot encode is not stored and the key is removed;
  ///   the encoding error is reported by the next ``flush()``. Use
  ///   ``setValue(_:forKey:expiresAt:)`` to get the error at once.
  public subscript(key: Key) -> Value? {
    get { entry(forKey: key)?.value }
    set {
      if let newValue {
        do {
          try setValue(newValue, forKey: key, expiresAt: nil)
        } catch {
          removeValue(forKey: key)
          state.withLock { $0.failure = $0.failure ?? error }
        }
      } else {
        removeValue(forKey: key)
      }
    }
  }

  /// The value stored under `key`, or `nil` when there is none or it has expired.
  public func value(forKey key: Key) -> Value? {
    entry(forKey: key)?.value
  }

  /// The entry stored under `key`, or `nil` when there is none or it has expired (an
  /// expired entry is removed, and its removal persisted).
  ///
  /// - Parameter key: The key to look up.
  /// - Returns: The entry, or `nil`.
  public func entry(forKey key: Key) -> CacheEntry<Value>? {
    guard let node = state.withLock({ $0.table.get(key) }) else { return nil }
    if node.expiresAt != .infinity, now().timeIntervalSinceReferenceDate > node.expiresAt {
      let record = node.value.record
      let removed: LRUNode<Key, Stored>? = state.withLock { state in
        guard let removed = state.table.remove(key, if: { $0.value.record == record }) else { return nil }
        state.pending += Journal.removeRecord(key: Journal.key(ofSetRecord: record))
        return removed
      }
      if removed != nil { scheduleWrite() }
      return nil
    }
    return CacheEntry(
      value: node.value.value, storedAt: Date(timeIntervalSinceReferenceDate: node.storedAt),
      expiresAt: node.expiresAt == .infinity ? nil : Date(timeIntervalSinceReferenceDate: node.expiresAt))
  }

  /// The number of entries (expired ones not yet removed included).
  public var count: Int {
    state.withLock { $0.table.count }
  }

  /// The keys, least recently used first.
  public var keys: [Key] {
    state.withLock { $0.table.keysOldestFirst }
  }

  // MARK: - Writing

  /// Stores `value` under `key` and queues the change for the journal.
  ///
  /// - Parameters:
  ///   - value: The value to store.
  ///   - key: Its key.
  ///   - expiresAt: When it expires; `nil` applies ``entryLifetime``.
  /// - Throws: ``SerializableCacheError/keyEncodingFailed(_:)`` or
  ///   ``SerializableCacheError/valueEncodingFailed(_:)``; the cache is unchanged then.
  public func setValue(_ value: Value, forKey key: Key, expiresAt: Date?) throws(SerializableCacheError) {
    let keyBytes: Data
    let valueBytes: Data
    do { keyBytes = try keyCodec.encode(key) } catch { throw .keyEncodingFailed(error) }
    do { valueBytes = try valueCodec.encode(value) } catch { throw .valueEncodingFailed(error) }
    let stamp = now()
    let expiry = expiresAt ?? entryLifetime.map { stamp.addingTimeInterval($0.timeInterval) }
    let storedAt = stamp.timeIntervalSinceReferenceDate
    let expires = expiry?.timeIntervalSinceReferenceDate ?? .infinity
    let record = Journal.setRecord(key: [UInt8](keyBytes), value: valueBytes, storedAt: storedAt, expiresAt: expires)
    let discards: LRUDiscards<Key, Stored>? = state.withLock { state in
      guard state.table.canHold(cost: 0) else { return nil }
      let discards = state.table.insert(
        Stored(value: value, record: record), forKey: key, cost: record.count, storedAt: storedAt, expiresAt: expires)
      state.pending += record
      for evicted in discards.evicted {
        state.pending += Journal.removeRecord(key: Journal.key(ofSetRecord: evicted.value.record))
      }
      return discards
    }
    withExtendedLifetime(discards) {}
    if discards != nil { scheduleWrite() }
  }

  /// Removes the value stored under `key`, if any, and queues the removal for the journal.
  public func removeValue(forKey key: Key) {
    let removed = state.withLock { state in
      let removed = state.table.remove(key)
      if let removed {
        state.pending += Journal.removeRecord(key: Journal.key(ofSetRecord: removed.value.record))
      }
      return removed
    }
    if removed != nil { scheduleWrite() }
  }

  /// Removes every entry and queues the removal for the journal.
  public func removeAll() {
    let removed = state.withLock { state in
      state.pending += Journal.removeAllRecord()
      return state.table.removeAll()
    }
    withExtendedLifetime(removed) {}
    scheduleWrite()
  }

  /// Removes every expired entry now (O(n)) and queues the removals for the journal.
  ///
  /// - Returns: The number of entries removed.
  @discardableResult
  public func removeExpired() -> Int {
    let instant = now().timeIntervalSinceReferenceDate
    let removed = state.withLock { state in
      let removed = state.table.removeExpired(at: instant)
      for node in removed {
        state.pending += Journal.removeRecord(key: Journal.key(ofSetRecord: node.value.record))
      }
      return removed
    }
    if !removed.isEmpty { scheduleWrite() }
    return removed.count
  }

  // MARK: - Persisting

  /// Writes every queued change now and waits until it is written.
  ///
  /// - Throws: ``SerializableCacheError/fileSystem(_:)`` when the journal cannot be written,
  ///   or the first error of a background write or of a subscript assignment since the
  ///   last `flush()`. The changes stay queued after a file-system failure and are written
  ///   by the next successful write.
  public func flush() async throws(SerializableCacheError) {
    await write()
    let failure = state.withLock { state in
      let failure = state.failure
      state.failure = nil
      return failure
    }
    if let failure { throw failure }
  }

  private func scheduleWrite() {
    let delay = writeDelay
    let clock = clock
    state.withLock { state in
      guard state.scheduledWrite == nil else { return }
      state.scheduledWrite = Task { [self] in
        try? await clock.sleep(for: delay)
        await self.write()
      }
    }
  }

  private func write() async {
    do {
      try await writer.write { [self] fileSize, mustReplace in takeWork(fileSize: fileSize, mustReplace: mustReplace) }
    } catch {
      state.withLock { state in
        state.needsSnapshot = true
        state.failure = state.failure ?? .fileSystem(error)
      }
    }
  }

  /// Hands the queued records to the writer, or a full snapshot when the journal has grown
  /// past twice the live data (or a write failed). Runs on the writer, under the lock.
  private func takeWork(fileSize: Int, mustReplace: Bool) -> JournalWork {
    state.withLock { state in
      state.scheduledWrite = nil
      let live = state.table.totalCost
      if mustReplace || state.needsSnapshot || fileSize + state.pending.count > 2 * live + Self.compactionSlack {
        var snapshot: [UInt8] = []
        snapshot.reserveCapacity(live)
        for node in state.table.entriesOldestFirst { snapshot += node.value.record }
        state.pending = []
        state.needsSnapshot = false
        return .replace(snapshot)
      }
      guard !state.pending.isEmpty else { return .nothing }
      var pending: [UInt8] = []
      swap(&pending, &state.pending)
      return .append(pending)
    }
  }

  /// Waits for the write scheduled by earlier changes, if any (for tests).
  func waitForScheduledWrite() async {
    let task = state.withLock { $0.scheduledWrite }
    await task?.value
  }

  /// Makes `sync` what flushes the journal's directory with ``Durability/powerLoss`` (for
  /// tests).
  func useDirectorySync(_ sync: @escaping DirectorySync) async {
    await writer.useDirectorySync(sync)
  }

  /// The journal's size in bytes as its writer knows it (for tests and benchmarks).
  var journalSize: Int {
    get async { await writer.fileSize }
  }
}

extension SerializableCache where Key: Codable, Value: Codable {
  /// Loads the cache called `name` from `directory`, or creates it empty, coding keys and
  /// values with ``StoreCodec/automatic``.
  ///
  /// ```swift
  /// let cache = try SerializableCache<String, Profile>.load(name: "profiles")
  /// ```
  ///
  /// - Parameters:
  ///   - name: The cache's name: its file is `<name>.kilncache` in `directory`.
  ///   - directory: Where the file lives; created if missing.
  ///   - entryLifetime: How long entries stored without an explicit expiry live; one hour
  ///     by default; `nil` keeps them until removed.
  ///   - countLimit: The largest number of entries; the least recently used go first.
  ///   - writeDelay: How long changes wait to be written together; 100 ms by default.
  ///   - clock: The clock of `writeDelay`.
  ///   - durability: What a completed write survives.
  ///   - now: The wall clock that stamps and expires entries.
  /// - Returns: The loaded cache.
  /// - Throws: ``SerializableCacheError/invalidName(_:)`` or
  ///   ``SerializableCacheError/fileSystem(_:)``.
  public static func load(
    name: String,
    directory: URL = defaultDirectory,
    entryLifetime: Duration? = .seconds(3600),
    countLimit: Int? = nil,
    writeDelay: Duration = .milliseconds(100),
    clock: any Clock<Duration> = ContinuousClock(),
    durability: Durability = .processCrash,
    now: @escaping @Sendable () -> Date = Date.init
  ) throws(SerializableCacheError) -> SerializableCache {
    try load(
      name: name, directory: directory, entryLifetime: entryLifetime, countLimit: countLimit, writeDelay: writeDelay,
      clock: clock, durability: durability, keyCodec: .automatic, valueCodec: .automatic, now: now)
  }
}
