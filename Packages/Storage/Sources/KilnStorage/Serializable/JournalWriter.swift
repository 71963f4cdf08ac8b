import Foundation

/// Serialises every write to one journal file: appends, and compactions through a
/// temporary file renamed over it.
///
/// Before each write the writer checks that the file at `path` is still the journal it
/// wrote — same file, same size — whether or not it holds a descriptor: a journal deleted,
/// replaced or cut behind its back (a cache purge, a restored backup) is rewritten whole,
/// header first, rather than appended to.
actor JournalWriter {
  let path: String
  let durability: Durability
  private var descriptor: Int32 = -1
  /// The size of the file as this writer knows it.
  private(set) var fileSize: Int
  /// The identity of the journal this writer knows (loaded or renamed in); `nil` while none.
  private var identity: FileIdentity?
  /// Called after the directory's entries change when writes must survive a power loss;
  /// `nil` otherwise.
  private var syncDirectory: DirectorySync?
  /// Names of the snapshots written before they are renamed over the journal.
  private let temporaryNames: TemporaryNames

  /// - Parameters:
  ///   - fileSize: The size of the journal at `path`; `0` when there is none yet.
  ///   - identity: The identity of that journal; `nil` when there is none.
  init(path: String, fileSize: Int, identity: FileIdentity?, durability: Durability) {
    self.path = path
    self.fileSize = fileSize
    self.identity = identity
    self.durability = durability
    syncDirectory = durability == .powerLoss ? POSIX.syncDirectory : nil
    temporaryNames = TemporaryNames(prefix: Self.temporaryPrefix(of: path))
  }

  /// The start of the names of the compaction files of the journal `file`, beside it.
  static func temporaryPrefix(of file: String) -> String {
    file + ".tmp-"
  }

  /// Removes the compaction files of the journal `file` in `directory` that their writers
  /// will never rename (see ``TemporaryNames/isLeftover(_:prefix:)``).
  static func removeLeftovers(of file: String, in directory: String) {
    let prefix = temporaryPrefix(of: file)
    guard let listing = try? POSIX.listDirectory(directory, withAttributes: false) else { return }
    for entry in listing where entry.name.hasPrefix(prefix) && TemporaryNames.isLeftover(entry.name, prefix: prefix) {
      try? POSIX.remove(directory + "/" + entry.name)
    }
  }

  deinit {
    if descriptor >= 0 { POSIX.closeDescriptor(descriptor) }
  }

  /// Asks `take` for work given the current file size, and does it.
  ///
  /// `take` is told to produce a full snapshot when the file at `path` is no longer the
  /// journal this writer knows (deleted, replaced or resized behind the cache's back):
  /// appending to it would be lost, or would write records without the journal's header.
  func write(_ take: @Sendable (_ fileSize: Int, _ mustReplace: Bool) -> JournalWork) throws(FileSystemError) {
    let mustReplace = try !openKnownJournal()
    switch take(fileSize, mustReplace) {
    case .nothing:
      return
    case .append(let bytes):
      precondition(descriptor >= 0, "JournalWriter appends only to the journal it checked")
      let isNew = fileSize == 0
      if isNew {
        try POSIX.writeAll(descriptor, Journal.header, path: path)
        fileSize = Journal.header.count
      }
      do {
        try POSIX.writeAll(descriptor, bytes, path: path)
      } catch {
        // Part of the batch may be on disk: the size is unknown until the next rewrite.
        fileSize = .max / 2
        throw error
      }
      fileSize += bytes.count
      if durability == .powerLoss { try POSIX.sync(descriptor, path: path) }
      // A journal just created exists for good only once its directory entry is flushed.
      if isNew { try syncDirectory?(directoryPath) }
    case .replace(let bytes):
      closeDescriptor()
      let temporary = temporaryNames.next()
      try POSIX.writeNewFile(temporary, Journal.header + bytes, sync: durability == .powerLoss)
      let written = POSIX.identity(of: temporary)
      do {
        try POSIX.rename(temporary, to: path)
      } catch {
        try? POSIX.remove(temporary)
        throw error
      }
      identity = written
      fileSize = Journal.header.count + bytes.count
      try syncDirectory?(directoryPath)
    }
  }

  /// Makes `descriptor` an open descriptor on the journal this writer knows, and answers
  /// whether it could: `false` when the file at `path` is missing, another file, or of
  /// another size than the writer wrote (then no descriptor is open).
  private func openKnownJournal() throws(FileSystemError) -> Bool {
    if descriptor < 0 {
      // Without a journal yet, create one (an empty file in its place is fine). With one,
      // never create: a missing journal must be rewritten whole, not restarted headerless.
      guard let opened = try POSIX.openForAppending(path, create: fileSize == 0) else { return false }
      descriptor = opened
      if fileSize == 0 { identity = POSIX.identity(ofDescriptor: opened) }
    }
    guard let status = POSIX.status(ofDescriptor: descriptor), status.identity == identity,
      status.size == fileSize, POSIX.identity(of: path) == status.identity
    else {
      closeDescriptor()
      return false
    }
    return true
  }

  /// Makes `sync` what flushes the directory, if it is flushed at all (for tests).
  func useDirectorySync(_ sync: @escaping DirectorySync) {
    if syncDirectory != nil { syncDirectory = sync }
  }

  private var directoryPath: String {
    String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
  }

  private func closeDescriptor() {
    if descriptor >= 0 {
      POSIX.closeDescriptor(descriptor)
      descriptor = -1
    }
  }
}
