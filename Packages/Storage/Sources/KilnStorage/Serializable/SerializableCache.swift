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

  struct State {
    var table: LRUTable<Key, Stored>
    /// Records not yet handed to the writer.
    var pending: [UInt8] = []
    /// Set when a write failed: the next write replaces the file with a full snapshot.
    var needsSnapshot = false
    /// The first failure of a background write, reported by the next `flush()`.
    var failure: SerializableCacheError?
    var scheduledWrite: Task<Void, Never>?
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

  let state: KilnMutex<State>
  /// What the cache did: see `statistics`.
  let counters = StoreCounters()
  let writer: JournalWriter
  let keyCodec: StoreCodec<Key>
  let valueCodec: StoreCodec<Value>
  let clock: any Clock<Duration>
  let now: @Sendable () -> Date

  /// The journal may grow to twice the live data plus this before it is compacted.
  static var compactionSlack: Int { 64 << 10 }

  /// The default directory: `Kiln` under the user's caches directory.
  public static var defaultDirectory: URL {
    let caches =
      FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first
      ?? FileManager.default.temporaryDirectory
    return caches.appendingPathComponent("Kiln", isDirectory: true)
  }

  init(
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
}
