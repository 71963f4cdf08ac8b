public import Foundation
import _KilnSynchronization

// Opening a journal: validating the name, replaying the file into memory, repairing a
// torn tail or an unreadable file.

extension SerializableCache {
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
    EntryLifetime.validate(entryLifetime, of: "SerializableCache")
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

  static func replay(
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
