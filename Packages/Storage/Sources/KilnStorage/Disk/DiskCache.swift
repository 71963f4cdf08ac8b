public import Foundation
import _KilnSynchronization

/// A persistent cache that keeps each entry in its own file under a directory, with a
/// size limit enforced on every write and least-recently-used eviction.
///
/// ```swift
/// let cache = try DiskCache<URL, Data>(
///   directory: .cachesDirectory.appending(path: "images"),
///   sizeLimit: 200 << 20,            // 200 MB
///   entryLifetime: .seconds(7 * 86_400)
/// )
/// try await cache.setValue(data, forKey: url)
/// let cached = try await cache.value(forKey: url)
/// ```
///
/// ## Files
///
/// A file's name is a 128-bit hash (SHA-256) of the encoded key, never the key itself, so
/// no key — `../../etc/passwd`, `/`, 10 KB of text, NUL bytes — can name a path outside
/// the directory. The file holds the full key, compared on every read: two keys whose
/// hashes collide never see each other's value. Writes go to a temporary file that is
/// renamed over the entry, so a crash at any moment leaves the complete old or the
/// complete new value. A file that is truncated, corrupt or not a Kiln entry at all reads
/// as a miss and is deleted.
///
/// ## Size and recency
///
/// With a ``sizeLimit``, each write evicts least recently used entries (by reads and
/// writes) before it returns, so the files in the directory never add up to more than the
/// limit once a call has returned. Opening a cache does not scan its directory: reads work
/// at once, and the index of sizes loads in the background on the first write.
///
/// - Important: Use one `DiskCache` per directory in a process, and do not share a
///   directory between processes that write: each instance keeps its own index of sizes.
///   For a store shared by processes, use ``SQLiteStore``.
public final class DiskCache<Key: Hashable & Sendable, Value: Sendable>: KeyValueStore, Sendable {
  /// The directory holding the entry files.
  public let directory: URL

  /// The largest total size of the entry files in bytes; `nil` for no limit.
  public let sizeLimit: Int?

  /// How long an entry stored without an explicit expiry lives; `nil` for until evicted.
  public let entryLifetime: Duration?

  /// What a completed write survives.
  public let durability: Durability

  private let path: String
  private let keyCodec: StoreCodec<Key>
  private let valueCodec: StoreCodec<Value>
  private let now: @Sendable () -> Date
  private let digest: @Sendable (UnsafeRawBufferPointer) -> KeyDigest
  private let index: DiskIndex
  /// What the cache did: see `statistics`.
  let counters: StoreCounters
  private let accesses: AccessLog
  /// Names of the files written before they are renamed over an entry.
  let temporaryNames = TemporaryNames(prefix: DiskIndex.temporaryPrefix)

  /// Opens (creating if needed) the cache in `directory`.
  ///
  /// Opening is O(1): it neither lists nor reads the directory.
  ///
  /// - Parameters:
  ///   - directory: The directory of the entry files; created with its parents if missing.
  ///     Give each cache its own directory: ``removeAll()`` deletes every entry file in it.
  ///   - sizeLimit: The largest total size of the files in bytes; `nil` for no limit.
  ///   - entryLifetime: How long entries stored without an explicit expiry live; `nil` (the
  ///     default) keeps them until evicted or removed.
  ///   - durability: What a completed write survives; ``Durability/processCrash`` by default.
  ///   - keyCodec: How keys become bytes (hashed for the file name, stored for comparison).
  ///   - valueCodec: How values become bytes.
  ///   - now: The wall clock that stamps and expires entries.
  /// - Throws: ``DiskCacheError/fileSystem(_:)`` when the directory cannot be created or a
  ///   file is in its place.
  public convenience init(
    directory: URL,
    sizeLimit: Int? = nil,
    entryLifetime: Duration? = nil,
    durability: Durability = .processCrash,
    keyCodec: StoreCodec<Key>,
    valueCodec: StoreCodec<Value>,
    now: @escaping @Sendable () -> Date = Date.init
  ) throws(DiskCacheError) {
    try self.init(
      directory: directory, sizeLimit: sizeLimit, entryLifetime: entryLifetime, durability: durability,
      keyCodec: keyCodec, valueCodec: valueCodec, now: now, digest: KeyDigest.sha256)
  }

  init(
    directory: URL,
    sizeLimit: Int?,
    entryLifetime: Duration?,
    durability: Durability,
    keyCodec: StoreCodec<Key>,
    valueCodec: StoreCodec<Value>,
    now: @escaping @Sendable () -> Date,
    digest: @escaping @Sendable (UnsafeRawBufferPointer) -> KeyDigest,
    accessLogCapacity: Int = AccessLog.defaultCapacity,
    directorySync: @escaping DirectorySync = POSIX.syncDirectory
  ) throws(DiskCacheError) {
    precondition((sizeLimit ?? 0) >= 0, "DiskCache sizeLimit must not be negative")
    EntryLifetime.validate(entryLifetime, of: "DiskCache")
    let path = directory.standardizedFileURL.path
    do { try POSIX.makeDirectory(path) } catch { throw .fileSystem(error) }
    self.directory = directory
    self.path = path
    self.sizeLimit = sizeLimit
    self.entryLifetime = entryLifetime
    self.durability = durability
    self.keyCodec = keyCodec
    self.valueCodec = valueCodec
    self.now = now
    self.digest = digest
    let accesses = AccessLog(capacity: accessLogCapacity)
    self.accesses = accesses
    counters = StoreCounters()
    index = DiskIndex(
      directory: path, sizeLimit: sizeLimit, syncDirectory: durability == .powerLoss ? directorySync : nil,
      accesses: accesses)
  }

  // MARK: - KeyValueStore

  /// The entry stored under `key`, or `nil` when there is none, it has expired, or its file
  /// is unreadable as an entry (then the file is deleted).
  ///
  /// - Parameter key: The key to read.
  /// - Returns: The entry, or `nil`.
  /// - Throws: ``DiskCacheError/fileSystem(_:)`` when the file exists but cannot be read
  ///   (permissions, I/O error); ``DiskCacheError/keyEncodingFailed(_:)``.
  public func entry(forKey key: Key) async throws(DiskCacheError) -> CacheEntry<Value>? {
    let keyBytes = try encode(key)
    // Hashed and compared in place: the encoded key is never copied.
    let (digest, read) = keyBytes.withUnsafeBytes { key in
      let digest = self.digest(key)
      return (digest, Result { () throws(DiskCacheError) in try readEntry(filePath(digest), key: key) })
    }
    switch try read.get() {
    case nil, .otherKey?:
      counters.add(.misses)
      return nil
    case .corrupt(let identity)?:
      counters.add(.misses)
      counters.add(.unreadableEntries)
      await index.remove(digest, ifStill: identity)
      return nil
    case .entry(let storedAt, let expiresAt, let bytes, let identity, let modified)?:
      if expiresAt != .infinity, now().timeIntervalSinceReferenceDate > expiresAt {
        counters.add(.misses)
        counters.add(.expiredReads)
        await index.remove(digest, ifStill: identity)
        return nil
      }
      let value: Value
      do {
        value = try valueCodec.decode(bytes)
      } catch {
        // Written by another version of the value type: unreadable, so a miss.
        counters.add(.misses)
        counters.add(.unreadableEntries)
        await index.remove(digest, ifStill: identity)
        return nil
      }
      counters.add(.hits)
      accesses.record(digest)
      // Persist recency coarsely, for the order of eviction after a restart.
      if POSIX.fileSystemNow() - modified > 60 { POSIX.touch(filePath(digest)) }
      return CacheEntry(
        value: value,
        storedAt: Date(timeIntervalSinceReferenceDate: storedAt),
        expiresAt: expiresAt == .infinity ? nil : Date(timeIntervalSinceReferenceDate: expiresAt))
    }
  }

  /// Reads and checks the entry file at `path` for `key`; `nil` when there is none.
  ///
  /// One `readv` puts the header and key on the stack and the value, then the checksum, in
  /// a buffer of their own, which the returned value's `Data` keeps: no copy after the read.
  private func readEntry(_ path: String, key: UnsafeRawBufferPointer) throws(DiskCacheError) -> EntryRead? {
    let read = withUnsafeTemporaryAllocation(
      byteCount: EntryFile.headerSize + key.count, alignment: 8
    ) { head -> Result<(SplitFileContents, EntryFile.Decoded)?, FileSystemError> in
      let contents: SplitFileContents
      do throws(FileSystemError) {
        guard let found = try POSIX.readFile(path, head: head, maximumSize: sizeLimit ?? .max) else {
          return .success(nil)
        }
        contents = found
      } catch {
        return .failure(error)
      }
      let decoded = contents.tail.withUnsafeBytes { tail in
        EntryFile.decode(
          head: UnsafeRawBufferPointer(rebasing: head[..<contents.headCount]), tail: tail, expectedKey: key)
      }
      return .success((contents, decoded))
    }
    let contents: SplitFileContents
    let decoded: EntryFile.Decoded
    switch read {
    case .failure(let error): throw .fileSystem(error)
    case .success(nil): return nil
    case .success(let found?): (contents, decoded) = found
    }
    switch decoded {
    case .corrupt: return .corrupt(contents.identity)
    case .otherKey: return .otherKey
    case .entry(let storedAt, let expiresAt, let range):
      return .entry(
        storedAt: storedAt, expiresAt: expiresAt, value: contents.tail[range], identity: contents.identity,
        modified: contents.modified)
    }
  }

  /// Stores `value` under `key` atomically, then evicts least recently used entries until
  /// the size limit holds.
  ///
  /// - Parameters:
  ///   - value: The value to store.
  ///   - key: Its key.
  ///   - expiresAt: When it expires; `nil` applies ``entryLifetime``.
  /// - Throws: `CancellationError` when the task is already cancelled (nothing is written);
  ///   ``DiskCacheError/entryTooLarge(size:limit:)``,
  ///   ``DiskCacheError/valueEncodingFailed(_:)``, ``DiskCacheError/fileSystem(_:)``. On any
  ///   error the previous value of the key is kept.
  public func setValue(_ value: Value, forKey key: Key, expiresAt: Date?) async throws {
    try Task.checkCancellation()
    let keyBytes = try encode(key)
    let valueBytes: Data
    do { valueBytes = try valueCodec.encode(value) } catch { throw DiskCacheError.valueEncodingFailed(error) }
    let stamp = now()
    let expiry = EntryLifetime.expiry(expiresAt, storedAt: stamp, lifetime: entryLifetime)
    let file = EntryFile.encode(
      key: keyBytes, value: valueBytes, storedAt: stamp.timeIntervalSinceReferenceDate,
      expiresAt: expiry?.timeIntervalSinceReferenceDate ?? .infinity)
    if let sizeLimit, file.count > sizeLimit {
      throw DiskCacheError.entryTooLarge(size: file.count, limit: sizeLimit)
    }
    let temporary = path + "/" + temporaryNames.next()
    do {
      try POSIX.writeNewFile(temporary, file, sync: durability == .powerLoss)
    } catch {
      throw DiskCacheError.fileSystem(error)
    }
    // From here on the write completes even if the task is cancelled: it is one rename.
    let evicted = try await index.commit(temporary: temporary, digest: encodedKeyDigest(keyBytes), size: file.count)
    counters.add(.writes)
    counters.add(.writtenBytes, file.count)
    if evicted > 0 { counters.add(.evictions, evicted) }
  }

  /// Removes the entry stored under `key`, if any.
  ///
  /// - Throws: ``DiskCacheError/fileSystem(_:)`` when the file cannot be deleted.
  public func removeValue(forKey key: Key) async throws(DiskCacheError) {
    try await index.remove(encodedKeyDigest(try encode(key)))
    counters.add(.removals)
  }

  /// Removes every entry file in the directory.
  ///
  /// - Throws: ``DiskCacheError/fileSystem(_:)`` when the directory cannot be listed or a
  ///   file cannot be deleted (the others are deleted regardless).
  public func removeAll() async throws(DiskCacheError) {
    try await index.removeAll()
  }

  // MARK: - Maintenance

  /// Deletes every expired entry now instead of when each is next read.
  ///
  /// Reads the header of every entry — its first bytes, never the value — outside the
  /// index's actor, so writes go on meanwhile: O(number of entries). A file that is not a
  /// valid entry is deleted too.
  ///
  /// - Returns: The number of entries deleted (an entry rewritten since its header was read
  ///   is kept, and not counted).
  /// - Throws: ``DiskCacheError/fileSystem(_:)`` when the directory cannot be listed.
  @discardableResult
  public func removeExpired() async throws(DiskCacheError) -> Int {
    let removed = try await removeExpired(beforeRemoving: {})
    counters.add(.expirations, removed)
    return removed
  }

  /// ``removeExpired()``, running `beforeRemoving` between reading the headers and
  /// removing the expired files (for tests).
  func removeExpired(beforeRemoving: () async -> Void) async throws(DiskCacheError) -> Int {
    let instant = now().timeIntervalSinceReferenceDate
    var expired: [(KeyDigest, FileIdentity)] = []
    for digest in try await index.digestsOldestFirst() {
      guard let prefix = try? POSIX.readPrefix(filePath(digest), count: EntryFile.headerSize) else { continue }
      let isExpired = prefix.bytes.withUnsafeBytes { buffer in
        EntryFile.header(buffer, fileSize: prefix.size).map { instant > $0.expiresAt } ?? true
      }
      if isExpired { expired.append((digest, prefix.identity)) }
    }
    await beforeRemoving()
    return try await index.remove(expired)
  }

  /// The total size of the entry files in bytes (loads the index if needed).
  public var totalSize: Int {
    get async throws(DiskCacheError) { try await index.totalSize() }
  }

  /// The number of entry files (loads the index if needed).
  public var count: Int {
    get async throws(DiskCacheError) { try await index.count() }
  }

  /// Loads the index of sizes now rather than on the first write.
  ///
  /// Call it after opening a large cache, off the critical path, so that the first write
  /// does not wait for the directory listing.
  public func warmUp() async throws(DiskCacheError) {
    try await index.load()
  }

  /// The path of the file that holds (or would hold) `key`'s entry.
  ///
  /// For diagnostics and tests: the file's name is a hash of the encoded key.
  public func fileURL(forKey key: Key) throws(DiskCacheError) -> URL {
    URL(fileURLWithPath: filePath(encodedKeyDigest(try encode(key))))
  }

  // MARK: - Internal

  func filePath(_ digest: KeyDigest) -> String {
    digest.path(in: path)
  }

  /// The keys' files, least recently used first (for tests of the eviction order).
  func digestsOldestFirst() async throws(DiskCacheError) -> [KeyDigest] {
    try await index.digestsOldestFirst()
  }

  func keyDigest(_ key: Key) throws(DiskCacheError) -> KeyDigest {
    encodedKeyDigest(try encode(key))
  }

  private func encodedKeyDigest(_ keyBytes: Data) -> KeyDigest {
    keyBytes.withUnsafeBytes { digest($0) }
  }

  private func encode(_ key: Key) throws(DiskCacheError) -> Data {
    do { return try keyCodec.encode(key) } catch { throw .keyEncodingFailed(error) }
  }
}

/// What reading one `DiskCache` entry file found (outside the generic class, so that reads
/// look up no generic type metadata).
private enum EntryRead {
  /// Not a valid entry file: delete it (if it is still this file).
  case corrupt(FileIdentity)
  /// A valid entry of another key (a hash collision).
  case otherKey
  /// The entry, checked; `value` is its value's bytes, in the buffer the file was read
  /// into (not copied).
  case entry(storedAt: Double, expiresAt: Double, value: Data, identity: FileIdentity, modified: Double)
}

extension DiskCache where Key: Codable, Value: Codable {
  /// Opens (creating if needed) the cache in `directory`, coding keys and values with
  /// ``StoreCodec/automatic``.
  ///
  /// ```swift
  /// let cache = try DiskCache<String, Article>(directory: folder, sizeLimit: 50 << 20)
  /// ```
  ///
  /// - Parameters:
  ///   - directory: The directory of the entry files; created with its parents if missing.
  ///   - sizeLimit: The largest total size of the files in bytes; `nil` for no limit.
  ///   - entryLifetime: How long entries stored without an explicit expiry live; `nil` (the
  ///     default) keeps them until evicted or removed.
  ///   - durability: What a completed write survives; ``Durability/processCrash`` by default.
  ///   - now: The wall clock that stamps and expires entries.
  /// - Throws: ``DiskCacheError/fileSystem(_:)`` when the directory cannot be created.
  public convenience init(
    directory: URL,
    sizeLimit: Int? = nil,
    entryLifetime: Duration? = nil,
    durability: Durability = .processCrash,
    now: @escaping @Sendable () -> Date = Date.init
  ) throws(DiskCacheError) {
    try self.init(
      directory: directory, sizeLimit: sizeLimit, entryLifetime: entryLifetime, durability: durability,
      keyCodec: .automatic, valueCodec: .automatic, now: now)
  }
}
