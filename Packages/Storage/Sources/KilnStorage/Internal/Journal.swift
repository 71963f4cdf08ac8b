// The append-only journal behind SerializableCache.
//
// File: an 8-byte header ("KLNJ", version 1, three zero bytes), then records:
//
//   u32 payload length | u32 CRC-32 of the payload | payload
//   payload: u8 operation, then
//     set (1):       u32 key length, key bytes, f64 storedAt, f64 expiresAt, value bytes
//     remove (2):    u32 key length, key bytes
//     removeAll (3): nothing
//
// A record is appended with one write(2); a crash in the middle leaves a torn tail, which
// the next load detects (length past the end, or a checksum mismatch) and truncates. The
// file is rewritten ("compacted") to a snapshot of the live entries through a temporary
// file and a rename once it grows past twice the live data, so each change costs O(1)
// amortised and the file stays proportional to what it holds.

import Foundation

enum Journal {
  static let header: [UInt8] = Array("KLNJ".utf8) + [1, 0, 0, 0]
  static let recordOverhead = 8

  enum Operation: UInt8 {
    case set = 1
    case remove = 2
    case removeAll = 3
  }

  /// Offset of the key bytes inside a set or remove record.
  static let keyOffset = recordOverhead + 1 + 4

  static func setRecord(key: [UInt8], value: Data, storedAt: Double, expiresAt: Double) -> [UInt8] {
    var writer = ByteWriter(capacity: keyOffset + key.count + 16 + value.count)
    writer.append(UInt32(0))
    writer.append(UInt32(0))
    writer.append(Operation.set.rawValue)
    writer.append(UInt32(key.count))
    writer.append(contentsOf: key)
    writer.append(storedAt)
    writer.append(expiresAt)
    writer.append(contentsOf: value)
    return seal(writer)
  }

  static func removeRecord(key: some Collection<UInt8>) -> [UInt8] {
    var writer = ByteWriter(capacity: keyOffset + key.count)
    writer.append(UInt32(0))
    writer.append(UInt32(0))
    writer.append(Operation.remove.rawValue)
    writer.append(UInt32(key.count))
    writer.append(contentsOf: key)
    return seal(writer)
  }

  static func removeAllRecord() -> [UInt8] {
    var writer = ByteWriter(capacity: recordOverhead + 1)
    writer.append(UInt32(0))
    writer.append(UInt32(0))
    writer.append(Operation.removeAll.rawValue)
    return seal(writer)
  }

  /// The key bytes of a set record made by ``setRecord(key:value:storedAt:expiresAt:)``.
  static func key(ofSetRecord record: [UInt8]) -> ArraySlice<UInt8> {
    let length = record.withUnsafeBytes {
      Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: recordOverhead + 1, as: UInt32.self)))
    }
    return record[keyOffset..<keyOffset + length]
  }

  private static func seal(_ writer: ByteWriter) -> [UInt8] {
    var writer = writer
    let payloadLength = writer.count - recordOverhead
    let checksum = writer.bytes.withUnsafeBytes {
      CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[recordOverhead...]))
    }
    writer.set(UInt32(payloadLength), at: 0)
    writer.set(checksum, at: 4)
    return writer.bytes
  }

  /// One decoded record; byte ranges index the journal's bytes.
  enum Record {
    case set(key: Range<Int>, storedAt: Double, expiresAt: Double, value: Range<Int>, record: Range<Int>)
    case remove(key: Range<Int>)
    case removeAll
  }

  /// Decodes the records of a journal file.
  ///
  /// - Returns: `nil` when the header is not a journal's; otherwise the intact records and
  ///   the offset where they end (the file is torn after it when smaller than its size).
  static func decode(_ bytes: [UInt8]) -> (records: [Record], validLength: Int)? {
    guard bytes.count >= header.count, bytes[..<header.count].elementsEqual(header) else { return nil }
    return bytes.withUnsafeBytes { buffer in
      var records: [Record] = []
      var offset = header.count
      while buffer.count - offset >= recordOverhead {
        let length = Int(UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
        let checksum = UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self))
        let start = offset + recordOverhead
        guard length >= 1, length <= buffer.count - start else { break }
        let payload = UnsafeRawBufferPointer(rebasing: buffer[start..<start + length])
        guard CRC32.checksum(payload) == checksum, let record = parse(payload, base: start, recordStart: offset)
        else { break }
        records.append(record)
        offset = start + length
      }
      return (records, offset)
    }
  }

  private static func parse(_ payload: UnsafeRawBufferPointer, base: Int, recordStart: Int) -> Record? {
    var reader = ByteReader(payload)
    guard let code = reader.readUInt8(), let operation = Operation(rawValue: code) else { return nil }
    switch operation {
    case .removeAll:
      return reader.remaining == 0 ? .removeAll : nil
    case .remove, .set:
      guard let keyLength = reader.readUInt32(), reader.readBytes(Int(keyLength)) != nil else { return nil }
      let key = base + 5..<base + 5 + Int(keyLength)
      if operation == .remove { return reader.remaining == 0 ? .remove(key: key) : nil }
      guard let storedAt = reader.readDouble(), let expiresAt = reader.readDouble(), !storedAt.isNaN, !expiresAt.isNaN
      else { return nil }
      return .set(
        key: key, storedAt: storedAt, expiresAt: expiresAt, value: base + reader.offset..<base + payload.count,
        record: recordStart..<base + payload.count)
    }
  }
}

/// What the journal writer should do next, decided under the cache's lock.
enum JournalWork: Sendable {
  case nothing
  /// Append these records.
  case append([UInt8])
  /// Replace the whole file with a header and these records.
  case replace([UInt8])
}

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
