import Dispatch
import _KilnSynchronization

/// The coordinator of a ``DiskCache`` directory: sizes and recency of every entry file,
/// renames that publish new entries, and evictions.
///
/// Opening a cache does not scan its directory: the index loads in the background on the
/// first operation that needs it (a write, a size query), while reads go straight to the
/// files. Every rename and unlink of an entry file happens on this actor, so the
/// accounting matches the directory after each call.
actor DiskIndex {
  let directory: String
  let sizeLimit: Int
  /// Called after the directory's entries change when writes must survive a power loss;
  /// `nil` otherwise.
  let syncDirectory: DirectorySync?
  let accesses: AccessLog

  /// The entries by digest with their file sizes as costs; `nil` until loaded.
  private var table: LRUTable<KeyDigest, Void>?
  private var loading: Task<[POSIX.DirectoryEntry], any Error>?
  /// Entries removed while a load was running, re-checked once it lands.
  private var removedWhileLoading: [KeyDigest] = []

  static let temporaryPrefix = ".kiln-tmp-"

  init(directory: String, sizeLimit: Int?, syncDirectory: DirectorySync?, accesses: AccessLog) {
    self.directory = directory
    self.sizeLimit = sizeLimit ?? .max
    self.syncDirectory = syncDirectory
    self.accesses = accesses
  }

  func path(for digest: KeyDigest) -> String {
    digest.path(in: directory)
  }

  // MARK: - Loading

  private func ensureLoaded() async throws(DiskCacheError) {
    if table != nil { return }
    let task: Task<[POSIX.DirectoryEntry], any Error>
    if let loading {
      task = loading
    } else {
      let directory = self.directory
      task = Task {
        try await withCheckedThrowingContinuation { continuation in
          // A large directory takes a while to list: not on the cooperative pool.
          DispatchQueue.global().async {
            continuation.resume(with: Result { try POSIX.listDirectory(directory) })
          }
        }
      }
      loading = task
    }
    let listing: [POSIX.DirectoryEntry]
    do {
      listing = try await task.value
    } catch {
      if loading == task { loading = nil }
      throw .fileSystem(error as? FileSystemError ?? FileSystemError(operation: "opendir", path: directory, code: 0))
    }
    if table != nil { return }  // removeAll or a concurrent caller got there first
    loading = nil
    var table = LRUTable<KeyDigest, Void>(costLimit: sizeLimit)
    var evicted: [KeyDigest] = []
    for entry in listing.sorted(by: { $0.modified < $1.modified }) {
      if entry.name.hasPrefix(Self.temporaryPrefix) {
        // Left behind by a writer that died between writing and renaming, in this run or
        // an earlier one with this pid.
        if TemporaryNames.isLeftover(entry.name, prefix: Self.temporaryPrefix) {
          try? POSIX.remove(directory + "/" + entry.name)
        }
        continue
      }
      guard entry.isRegularFile, let digest = KeyDigest(fileName: entry.name) else { continue }
      let discards = table.insert((), forKey: digest, cost: entry.size, storedAt: 0, expiresAt: .infinity)
      evicted += discards.evicted.map(\.key)
    }
    for digest in removedWhileLoading where POSIX.identity(of: path(for: digest)) == nil {
      table.remove(digest)
    }
    removedWhileLoading = []
    for digest in evicted { try? POSIX.remove(path(for: digest)) }
    self.table = table
    // Best effort: evictions undone by a power loss are redone at the next load.
    if !evicted.isEmpty { try? syncDirectory?(directory) }
  }

  /// Loads the index now (normally it loads on first need).
  func load() async throws(DiskCacheError) {
    try await ensureLoaded()
  }

  private func applyAccesses() {
    for digest in accesses.drain() { table?.touch(digest) }
  }

  // MARK: - Changes

  /// Publishes a written temporary file as the entry for `digest` and evicts least
  /// recently used entries until the size limit holds.
  /// - Returns: The number of entries evicted.
  @discardableResult
  func commit(temporary: String, digest: KeyDigest, size: Int) async throws(DiskCacheError) -> Int {
    do {
      try await ensureLoaded()
    } catch {
      try? POSIX.remove(temporary)
      throw error
    }
    let destination = path(for: digest)
    do {
      try POSIX.rename(temporary, to: destination)
    } catch {
      try? POSIX.remove(temporary)
      throw .fileSystem(error)
    }
    applyAccesses()
    let discards = table!.insert((), forKey: digest, cost: size, storedAt: 0, expiresAt: .infinity)
    for node in discards.evicted { try? POSIX.remove(path(for: node.key)) }
    // One sync makes the rename and the evictions' unlinks durable together.
    try sync()
    return discards.evicted.count
  }

  /// Removes the entry for `digest`.
  func remove(_ digest: KeyDigest) throws(DiskCacheError) {
    do { try POSIX.remove(path(for: digest)) } catch { throw .fileSystem(error) }
    forget(digest)
    try sync()
  }

  /// Removes the entry file for `digest` only if it is still the file that was read (a
  /// newer file renamed over it in the meantime is kept).
  ///
  /// The directory is not synced: the callers remove damaged or expired files, which read
  /// as misses again if a power loss brings them back. ``remove(_:)`` syncs once
  /// for all its removals.
  ///
  /// - Returns: Whether the file was removed.
  @discardableResult
  func remove(_ digest: KeyDigest, ifStill identity: FileIdentity) -> Bool {
    let path = path(for: digest)
    guard POSIX.identity(of: path) == identity else { return false }
    do { try POSIX.remove(path) } catch { return false }
    forget(digest)
    return true
  }

  /// Flushes the directory's entries when writes must survive a power loss.
  private func sync() throws(DiskCacheError) {
    do { try syncDirectory?(directory) } catch { throw .fileSystem(error) }
  }

  private func forget(_ digest: KeyDigest) {
    if table != nil {
      table!.remove(digest)
    } else if loading != nil {
      removedWhileLoading.append(digest)
    }
  }

  /// Removes every entry file (and stale temporary files).
  func removeAll() throws(DiskCacheError) {
    let listing: [POSIX.DirectoryEntry]
    do { listing = try POSIX.listDirectory(directory, withAttributes: false) } catch { throw .fileSystem(error) }
    var failure: FileSystemError?
    for entry in listing where KeyDigest(fileName: entry.name) != nil {
      do { try POSIX.remove(directory + "/" + entry.name) } catch { failure = failure ?? error }
    }
    table = LRUTable(costLimit: sizeLimit)
    loading = nil
    removedWhileLoading = []
    _ = accesses.drain()
    if let failure { throw .fileSystem(failure) }
    try sync()
  }

  /// Removes the entry files of `entries` that are still the files identified.
  ///
  /// - Returns: The number of files removed.
  func remove(_ entries: [(KeyDigest, FileIdentity)]) throws(DiskCacheError) -> Int {
    var removed = 0
    for (digest, identity) in entries {
      if remove(digest, ifStill: identity) { removed += 1 }
    }
    if removed > 0 { try sync() }
    return removed
  }

  // MARK: - Inspecting

  func totalSize() async throws(DiskCacheError) -> Int {
    try await ensureLoaded()
    return table!.totalCost
  }

  func count() async throws(DiskCacheError) -> Int {
    try await ensureLoaded()
    return table!.count
  }

  /// The digests, least recently used first.
  func digestsOldestFirst() async throws(DiskCacheError) -> [KeyDigest] {
    try await ensureLoaded()
    applyAccesses()
    return table!.keysOldestFirst
  }
}
