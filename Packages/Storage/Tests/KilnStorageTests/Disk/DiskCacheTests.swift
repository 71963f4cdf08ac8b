import Foundation
import KilnTesting
import Testing

@testable import KilnStorage

struct Article: Codable, Hashable, Sendable {
  var id: Int
  var title: String
}

@Suite("DiskCache", .timeLimit(.minutes(2)))
struct DiskCacheTests {
  @Test("values round-trip through files, and a new instance on the directory reads them")
  func roundTripAndRestart() async throws {
    try await withTemporaryDirectory { directory in
      let now = ManualDate()
      let cache = try DiskCache<String, Article>(directory: directory, now: now.provider)
      try await cache.setValue(Article(id: 1, title: "One"), forKey: "a")
      try await cache.setValue(Article(id: 2, title: "Two"), forKey: "b")
      #expect(try await cache.value(forKey: "a") == Article(id: 1, title: "One"))
      #expect(try await cache.entry(forKey: "b")?.storedAt == now())
      #expect(try await cache.value(forKey: "missing") == nil)

      let reopened = try DiskCache<String, Article>(directory: directory, now: now.provider)
      #expect(try await reopened.value(forKey: "b") == Article(id: 2, title: "Two"))
      #expect(try await reopened.count == 2)
      #expect(try await reopened.totalSize == (try totalFileSize(in: directory)))
    }
  }

  @Test(
    "hostile keys stay inside the directory and round-trip",
    arguments: [
      "../../etc/passwd", "/", "..", ".", "", "a/b/c", "\\..\\windows", String(repeating: "k", count: 10_240),
      "nul\0inside", "\0", "emoji 🔥🧪👩‍👩‍👧", "~/.ssh/id_rsa", "con", "with\nnewline",
    ])
  func hostileKeys(key: String) async throws {
    try await withTemporaryDirectory { root in
      let directory = root.appendingPathComponent("cache")
      let cache = try DiskCache<String, String>(directory: directory)
      try await cache.setValue("value of \(key.prefix(20))", forKey: key)
      #expect(try await cache.value(forKey: key) == "value of \(key.prefix(20))")
      let files = try entryFiles(in: directory)
      #expect(files.count == 1)
      #expect(files.first?.lastPathComponent.count == 32)
      #expect(
        try cache.fileURL(forKey: key).deletingLastPathComponent().standardizedFileURL.path
          == directory.standardizedFileURL.path)
      // Nothing was created beside the cache's directory.
      #expect(try FileManager.default.contentsOfDirectory(atPath: root.path) == ["cache"])
      try await cache.removeValue(forKey: key)
      #expect(try await cache.value(forKey: key) == nil)
      #expect(try entryFiles(in: directory).isEmpty)
    }
  }

  @Test("two keys whose hashes collide never read each other's value")
  func hashCollisions() async throws {
    try await withTemporaryDirectory { directory in
      let cache = try DiskCache<String, String>(
        directory: directory, sizeLimit: nil, entryLifetime: nil, durability: .processCrash,
        keyCodec: .automatic, valueCodec: .automatic, now: Date.init,
        digest: { _ in KeyDigest(high: 1, low: 2) })
      try await cache.setValue("A", forKey: "a")
      #expect(try await cache.value(forKey: "b") == nil)
      try await cache.setValue("B", forKey: "b")
      #expect(try await cache.value(forKey: "a") == nil)
      #expect(try await cache.value(forKey: "b") == "B")
      // A miss on the other key leaves the entry in place.
      #expect(try await cache.value(forKey: "b") == "B")
      try await cache.setValue("A2", forKey: "a")
      #expect(try await cache.value(forKey: "a") == "A2")
      #expect(try await cache.value(forKey: "b") == nil)
      #expect(try entryFiles(in: directory).count == 1)
    }
  }

  @Test("keys of different lengths whose hashes collide never read each other's value, and keep their files")
  func hashCollisionsAcrossKeyLengths() async throws {
    try await withTemporaryDirectory { directory in
      let cache = try DiskCache<String, String>(
        directory: directory, sizeLimit: nil, entryLifetime: nil, durability: .processCrash,
        keyCodec: .automatic, valueCodec: .automatic, now: Date.init,
        digest: { _ in KeyDigest(high: 1, low: 2) })
      let long = String(repeating: "k", count: 300)
      // A file shorter than the header and key that the longer key expects: its last bytes,
      // the checksum, are read into the part meant for the key.
      try await cache.setValue("", forKey: "a")
      #expect(try await cache.value(forKey: long) == nil)
      #expect(try entryFiles(in: directory).count == 1)
      #expect(try await cache.value(forKey: "a") == "")
      try await cache.setValue("x", forKey: "a")
      #expect(try await cache.value(forKey: long) == nil)
      #expect(try await cache.value(forKey: "a") == "x")
      // A file longer than the shorter key expects.
      try await cache.setValue("long value", forKey: long)
      #expect(try await cache.value(forKey: "a") == nil)
      #expect(try entryFiles(in: directory).count == 1)
      #expect(try await cache.value(forKey: long) == "long value")
    }
  }

  @Test("a damaged file of a key of another length reads as a miss and is deleted", arguments: Damage.allCases)
  func damagedFilesOfCollidingKeys(damage: Damage) async throws {
    try await withTemporaryDirectory { directory in
      let cache = try DiskCache<String, String>(
        directory: directory, sizeLimit: nil, entryLifetime: nil, durability: .processCrash,
        keyCodec: .automatic, valueCodec: .automatic, now: Date.init,
        digest: { _ in KeyDigest(high: 1, low: 2) })
      try await cache.setValue(String(repeating: "v", count: 100), forKey: "key")
      let file = try cache.fileURL(forKey: "key")
      for other in ["k", "a much longer key than the one stored"] {
        try Data(damage.apply(to: [UInt8](try Data(contentsOf: file)))).write(to: file)
        #expect(try await cache.value(forKey: other) == nil)
        #expect(!FileManager.default.fileExists(atPath: file.path), "read as \(other)")
        try await cache.setValue(String(repeating: "v", count: 100), forKey: "key")
      }
    }
  }

  @Test("a bit flipped anywhere in a large entry makes it a miss, and the file is deleted")
  func flippedBitsInLargeEntries() async throws {
    try await withTemporaryDirectory { directory in
      let cache = try DiskCache<String, Data>(directory: directory)
      let value = Data((0..<5_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
      try await cache.setValue(value, forKey: "key")
      let file = try cache.fileURL(forKey: "key")
      let intact = [UInt8](try Data(contentsOf: file))
      #expect(intact.count == 40 + 3 + 5_000)
      for position in [0, 20, 37, 39, 40, 41, 64, 100, 1_000, 2_047, 4_096, 5_000, 5_030, 5_038, 5_042] {
        var damaged = intact
        damaged[position] ^= 0x20
        try Data(damaged).write(to: file)
        #expect(try await cache.value(forKey: "key") == nil, "byte \(position)")
        #expect(!FileManager.default.fileExists(atPath: file.path), "byte \(position)")
        try Data(intact).write(to: file)
        #expect(try await cache.value(forKey: "key") == value)
      }
    }
  }

  @Test(
    "a Data value read back is a plain Data from index 0, whatever its size",
    arguments: [0, 1, 10, 14, 15, 64, 1_024, 70_000])
  func dataValuesStartAtZero(size: Int) async throws {
    try await withTemporaryDirectory { directory in
      let cache = try DiskCache<String, Data>(directory: directory)
      let value = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) })
      try await cache.setValue(value, forKey: "key")
      var read = try #require(try await cache.value(forKey: "key"))
      #expect(read == value)
      #expect(read.startIndex == 0)
      #expect(read.count == size)
      #expect(Array(read) == Array(value))
      // The value owns its bytes: mutating it leaves the cache's copy alone.
      read.append(0xFF)
      if size > 0 { read[0] ^= 0xFF }
      #expect(try await cache.value(forKey: "key") == value)
    }
  }

  enum Damage: String, CaseIterable, Sendable {
    case truncatedHeader, truncatedValue, missingChecksum, flippedValueBit, flippedKeyBit
    case empty, foreignText, wrongVersion, hugeLengthField, appendedGarbage

    func apply(to bytes: [UInt8]) -> [UInt8] {
      var bytes = bytes
      switch self {
      case .truncatedHeader: return Array(bytes.prefix(20))
      case .truncatedValue: return Array(bytes.prefix(bytes.count - 10))
      case .missingChecksum: return Array(bytes.dropLast(4))
      case .flippedValueBit: bytes[bytes.count - 6] ^= 0x10
      case .flippedKeyBit: bytes[36] ^= 0x01
      case .empty: return []
      case .foreignText: return Array("hello, I am a text file that happens to sit here".utf8)
      case .wrongVersion: bytes[4] = 99
      case .hugeLengthField:
        for index in 12..<20 { bytes[index] = 0xFF }
      case .appendedGarbage: bytes += [1, 2, 3]
      }
      return bytes
    }
  }

  @Test("a damaged file reads as a miss and is deleted", arguments: Damage.allCases)
  func damagedFiles(damage: Damage) async throws {
    try await withTemporaryDirectory { directory in
      let cache = try DiskCache<String, String>(directory: directory)
      try await cache.setValue(String(repeating: "v", count: 100), forKey: "key")
      let file = try cache.fileURL(forKey: "key")
      let damaged = damage.apply(to: [UInt8](try Data(contentsOf: file)))
      try Data(damaged).write(to: file)
      #expect(try await cache.value(forKey: "key") == nil)
      #expect(!FileManager.default.fileExists(atPath: file.path))
      // The key works again afterwards.
      try await cache.setValue("fresh", forKey: "key")
      #expect(try await cache.value(forKey: "key") == "fresh")
    }
  }

  @Test("a value written with another type reads as a miss and is deleted")
  func undecodableValue() async throws {
    try await withTemporaryDirectory { directory in
      let strings = try DiskCache<String, Article>(directory: directory)
      try await strings.setValue(Article(id: 1, title: "t"), forKey: "k")
      let numbers = try DiskCache<String, Int>(directory: directory)
      #expect(try await numbers.value(forKey: "k") == nil)
      #expect(try entryFiles(in: directory).isEmpty)
    }
  }

  @Test("the size limit holds after each write, and the index matches the directory")
  func sizeLimitAfterEachWrite() async throws {
    try await withTemporaryDirectory { directory in
      let limit = 20_000
      let cache = try DiskCache<Int, Data>(directory: directory, sizeLimit: limit)
      var generator = SeededRandomNumberGenerator(seed: TestSeed.current &+ UInt64(7))
      for step in 0..<150 {
        let size = Int(generator.next() % 3_000)
        try await cache.setValue(Data(repeating: UInt8(step & 0xFF), count: size), forKey: Int(generator.next() % 40))
        let onDisk = try totalFileSize(in: directory)
        #expect(onDisk <= limit, "after write \(step)")
        #expect(try await cache.totalSize == onDisk, "after write \(step)")
      }
    }
  }

  @Test("eviction removes the least recently used entry, counting reads as use")
  func lruEviction() async throws {
    try await withTemporaryDirectory { directory in
      let value = Data(repeating: 1, count: 1_000)
      let entrySize = 1_000 + 40 + 1  // value + header and checksum + a one-byte key
      let cache = try DiskCache<String, Data>(directory: directory, sizeLimit: entrySize * 3)
      try await cache.setValue(value, forKey: "a")
      try await cache.setValue(value, forKey: "b")
      try await cache.setValue(value, forKey: "c")
      #expect(try await cache.value(forKey: "a") == value)
      try await cache.setValue(value, forKey: "d")
      #expect(try await cache.value(forKey: "b") == nil)
      #expect(try await cache.value(forKey: "a") == value)
      #expect(try await cache.value(forKey: "c") == value)
      #expect(try await cache.value(forKey: "d") == value)
      // Reads since the eviction: a, c, d.
      #expect(try await cache.digestsOldestFirst() == (try ["a", "c", "d"].map { try cache.keyDigest($0) }))
    }
  }

  @Test("reads still count as use once the read log is full: the latest read of each entry wins")
  func fullReadLog() async throws {
    try await withTemporaryDirectory { directory in
      let value = Data(repeating: 1, count: 100)
      let entrySize = 100 + 40 + 1  // value + header and checksum + a one-byte key
      let cache = try DiskCache<String, Data>(
        directory: directory, sizeLimit: 2 * entrySize, entryLifetime: nil, durability: .processCrash,
        keyCodec: .automatic, valueCodec: .automatic, now: Date.init, digest: KeyDigest.sha256,
        accessLogCapacity: 4)
      try await cache.setValue(value, forKey: "a")
      try await cache.setValue(value, forKey: "b")
      for _ in 0..<20 { #expect(try await cache.value(forKey: "a") == value) }  // fills the log
      #expect(try await cache.value(forKey: "b") == value)  // the most recent read
      try await cache.setValue(value, forKey: "c")  // evicts one
      #expect(try await cache.value(forKey: "b") == value)
      #expect(try await cache.value(forKey: "a") == nil)
      #expect(try await cache.value(forKey: "c") == value)
    }
  }

  @Test(
    "with powerLoss the directory is synced after each change of its entries, evictions and removals included",
    arguments: [Durability.powerLoss, .processCrash])
  func directorySyncs(durability: Durability) async throws {
    try await withTemporaryDirectory { directory in
      let value = Data(repeating: 1, count: 100)
      let entrySize = 100 + 40 + 1  // value + header and checksum + a one-byte key
      // What the directory holds at each sync, by key.
      let synced = Recorder<[String]>()
      let cache = try DiskCache<String, Data>(
        directory: directory, sizeLimit: 2 * entrySize, entryLifetime: nil, durability: durability,
        keyCodec: .automatic, valueCodec: .automatic, now: Date.init, digest: KeyDigest.sha256,
        directorySync: { path in
          let names = Set((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [])
          synced.append(["a", "b", "c"].filter { names.contains(KeyDigest.sha256(Array($0.utf8)).fileName) })
        })
      try await cache.setValue(value, forKey: "a")
      try await cache.setValue(value, forKey: "b")
      try await cache.setValue(value, forKey: "c")  // evicts a
      try await cache.removeValue(forKey: "b")
      try await cache.removeAll()
      if durability == .powerLoss {
        #expect(synced.values == [["a"], ["a", "b"], ["b", "c"], ["c"], []])
      } else {
        #expect(synced.values.isEmpty)
      }
    }
  }

  @Test("an entry larger than the whole limit is refused and the key's previous value kept")
  func entryTooLarge() async throws {
    try await withTemporaryDirectory { directory in
      let cache = try DiskCache<String, Data>(directory: directory, sizeLimit: 500)
      try await cache.setValue(Data(count: 100), forKey: "k")
      await #expect {
        try await cache.setValue(Data(count: 1_000), forKey: "k")
      } throws: { error in
        guard case DiskCacheError.entryTooLarge(let size, let limit) = error else { return false }
        return size == 1_041 && limit == 500
      }
      #expect(try await cache.value(forKey: "k") == Data(count: 100))
    }
  }

  @Test("entries expire after the lifetime on the injected clock, and expired files are deleted")
  func expiry() async throws {
    try await withTemporaryDirectory { directory in
      let now = ManualDate()
      let cache = try DiskCache<String, Int>(directory: directory, entryLifetime: .seconds(60), now: now.provider)
      try await cache.setValue(1, forKey: "a")
      try await cache.setValue(2, forKey: "b", expiresAt: now() + 600)
      try await cache.setValue(3, forKey: "c", expiresAt: .distantFuture)
      #expect(try await cache.entry(forKey: "a")?.expiresAt == now() + 60)
      now.advance(by: .seconds(60))
      #expect(try await cache.value(forKey: "a") == 1)
      now.advance(by: .seconds(1))
      #expect(try await cache.value(forKey: "a") == nil)
      #expect(try entryFiles(in: directory).count == 2)
      now.advance(by: .seconds(1_000))
      #expect(try await cache.removeExpired() == 1)
      #expect(try await cache.value(forKey: "c") == 3)
      #expect(try await cache.count == 1)
    }
  }

  @Test("removeExpired deletes expired entries and files with a damaged header, judging by headers alone")
  func removeExpiredByHeaders() async throws {
    try await withTemporaryDirectory { directory in
      let now = ManualDate()
      let cache = try DiskCache<String, String>(directory: directory, now: now.provider)
      try await cache.setValue("expires", forKey: "expired", expiresAt: now() + 10)
      try await cache.setValue("lives", forKey: "live", expiresAt: now() + 1_000)
      try await cache.setValue("forever", forKey: "forever", expiresAt: nil)
      try await cache.setValue("cut", forKey: "truncated", expiresAt: nil)
      try await cache.setValue("flipped", forKey: "flipped", expiresAt: nil)
      let truncated = try cache.fileURL(forKey: "truncated")
      try FileHandle(forWritingTo: truncated).truncate(atOffset: 20)  // not even a header
      let flipped = try cache.fileURL(forKey: "flipped")
      var bytes = try Data(contentsOf: flipped)
      bytes[bytes.count - 6] ^= 1  // a value byte: the header is intact
      try bytes.write(to: flipped)
      now.advance(by: .seconds(11))
      #expect(try await cache.removeExpired() == 2)
      #expect(!FileManager.default.fileExists(atPath: try cache.fileURL(forKey: "expired").path))
      #expect(!FileManager.default.fileExists(atPath: truncated.path))
      #expect(FileManager.default.fileExists(atPath: flipped.path))  // a miss when read, not expired
      #expect(try await cache.count == 3)
      #expect(try await cache.value(forKey: "live") == "lives")
      #expect(try await cache.value(forKey: "forever") == "forever")
      #expect(try await cache.value(forKey: "flipped") == nil)
      #expect(try await cache.removeExpired() == 0)
    }
  }

  @Test("an expired entry rewritten while removeExpired runs is kept, and not counted")
  func removeExpiredKeepsRewrittenEntries() async throws {
    try await withTemporaryDirectory { directory in
      let now = ManualDate()
      let cache = try DiskCache<String, Int>(directory: directory, now: now.provider)
      try await cache.setValue(1, forKey: "a", expiresAt: now() + 10)
      try await cache.setValue(2, forKey: "b", expiresAt: now() + 10)
      now.advance(by: .seconds(11))
      let removed = try await cache.removeExpired(beforeRemoving: {
        try? await cache.setValue(3, forKey: "a", expiresAt: nil)
      })
      #expect(removed == 1)
      #expect(try await cache.value(forKey: "a") == 3)
      #expect(try await cache.value(forKey: "b") == nil)
      #expect(try await cache.count == 1)
    }
  }

  @Test("removeAll deletes every entry file and leaves foreign files alone")
  func removeAll() async throws {
    try await withTemporaryDirectory { directory in
      let cache = try DiskCache<Int, Int>(directory: directory, sizeLimit: 1_000_000)
      for key in 0..<20 { try await cache.setValue(key, forKey: key) }
      try Data("keep me".utf8).write(to: directory.appendingPathComponent("notes.txt"))
      try await cache.removeAll()
      #expect(try entryFiles(in: directory).map(\.lastPathComponent) == ["notes.txt"])
      #expect(try await cache.totalSize == 0)
      #expect(try await cache.value(forKey: 3) == nil)
      try await cache.setValue(3, forKey: 3)
      #expect(try await cache.value(forKey: 3) == 3)
    }
  }

  @Test("a cancelled task writes nothing")
  func cancelledWrite() async throws {
    try await withTemporaryDirectory { directory in
      let cache = try DiskCache<String, Int>(directory: directory)
      let gate = Gate()
      let write = Task {
        try? await gate.wait()
        try await cache.setValue(1, forKey: "k")
      }
      write.cancel()
      gate.open()
      await #expect(throws: CancellationError.self) { try await write.value }
      #expect(try await cache.value(forKey: "k") == nil)
      #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }
  }

  @Test("a file in place of the directory is a file-system error at opening")
  func directoryIsAFile() async throws {
    try await withTemporaryDirectory { root in
      let file = root.appendingPathComponent("occupied")
      try Data("x".utf8).write(to: file)
      #expect {
        _ = try DiskCache<String, Int>(directory: file)
      } throws: { error in
        guard case DiskCacheError.fileSystem(let failure) = error else { return false }
        return failure.code == ENOTDIR
      }
    }
  }

  @Test("a directory deleted under the cache makes writes fail with a file-system error, not a crash")
  func vanishedDirectory() async throws {
    try await withTemporaryDirectory { root in
      let directory = root.appendingPathComponent("cache")
      let cache = try DiskCache<String, Int>(directory: directory)
      try await cache.setValue(1, forKey: "a")
      try FileManager.default.removeItem(at: directory)
      #expect(try await cache.value(forKey: "a") == nil)
      await #expect {
        try await cache.setValue(2, forKey: "a")
      } throws: { error in
        guard case DiskCacheError.fileSystem(let failure) = error else { return false }
        return failure.code == ENOENT
      }
    }
  }

  @Test("a value the codec cannot encode is a typed error and writes nothing")
  func encodingFailure() async throws {
    try await withTemporaryDirectory { directory in
      let cache = try DiskCache<String, Double>(
        directory: directory, keyCodec: .automatic, valueCodec: .json())
      await #expect {
        try await cache.setValue(.nan, forKey: "k")
      } throws: { error in
        guard case DiskCacheError.valueEncodingFailed = error else { return false }
        return true
      }
      #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }
  }

  @Test("temporary files left by dead writers are removed when the index loads; live ones stay")
  func staleTemporaryFiles() async throws {
    try await withTemporaryDirectory { directory in
      let cache = try DiskCache<String, Int>(directory: directory)
      let other = try DiskCache<String, Int>(directory: directory.appendingPathComponent("other"))
      let dead = directory.appendingPathComponent(".kiln-tmp-2147483646-1")
      // Left by an earlier process that had this process's pid (PID 1 in every container
      // run), in the names of this version and of 0.1.0.
      let samePID = directory.appendingPathComponent(".kiln-tmp-\(getpid())-9e3779b97f4a7c15-1")
      let samePIDOldName = directory.appendingPathComponent(".kiln-tmp-\(getpid())-999999")
      // Being written by live instances of this process.
      let mine = directory.appendingPathComponent(cache.temporaryNames.next())
      let another = directory.appendingPathComponent(other.temporaryNames.next())
      for file in [dead, samePID, samePIDOldName, mine, another] { try Data("partial".utf8).write(to: file) }
      try await cache.warmUp()
      #expect(!FileManager.default.fileExists(atPath: dead.path))
      #expect(!FileManager.default.fileExists(atPath: samePID.path))
      #expect(!FileManager.default.fileExists(atPath: samePIDOldName.path))
      #expect(FileManager.default.fileExists(atPath: mine.path))
      #expect(FileManager.default.fileExists(atPath: another.path))
      #expect(try await cache.count == 0)
    }
  }

  @Test("a temporary file left by an earlier process with this pid neither fails writes nor stays")
  func temporaryNameOfEarlierProcess() async throws {
    try await withTemporaryDirectory { directory in
      // What 0.1.0 wrote first in a process of this pid.
      let stale = directory.appendingPathComponent(".kiln-tmp-\(getpid())-1")
      try Data("left by a crashed run with the same pid".utf8).write(to: stale)
      let cache = try DiskCache<String, Int>(directory: directory)
      try await cache.setValue(1, forKey: "a")
      try await cache.setValue(2, forKey: "b")
      #expect(try await cache.value(forKey: "a") == 1)
      #expect(try await cache.value(forKey: "b") == 2)
      #expect(!FileManager.default.fileExists(atPath: stale.path))
      #expect(try entryFiles(in: directory).count == 2)
    }
  }

  @Test("reopening with a smaller limit trims the directory on the first write")
  func smallerLimitAfterRestart() async throws {
    try await withTemporaryDirectory { directory in
      let big = try DiskCache<Int, Data>(directory: directory)
      for key in 0..<10 { try await big.setValue(Data(count: 1_000), forKey: key) }
      let small = try DiskCache<Int, Data>(directory: directory, sizeLimit: 3_500)
      #expect(try await small.value(forKey: 0) == Data(count: 1_000))  // reads work before the index loads
      try await small.setValue(Data(count: 1_000), forKey: 100)
      #expect(try totalFileSize(in: directory) <= 3_500)
      #expect(try await small.value(forKey: 100) == Data(count: 1_000))
    }
  }

  @Test("the limit holds when many tasks write at once, and the index matches the directory")
  func concurrentWriters() async throws {
    try await withTemporaryDirectory { directory in
      let limit = 30_000
      let cache = try DiskCache<Int, Data>(directory: directory, sizeLimit: limit)
      try await withThrowingTaskGroup(of: Void.self) { group in
        for worker in 0..<6 {
          group.addTask {
            var generator = SeededRandomNumberGenerator(seed: TestSeed.current &+ UInt64(UInt64(worker)))
            for _ in 0..<60 {
              let key = Int(generator.next() % 50)
              if generator.next() % 4 == 0 {
                _ = try await cache.value(forKey: key)
              } else {
                try await cache.setValue(Data(count: Int(generator.next() % 2_000)), forKey: key)
              }
            }
          }
        }
        try await group.waitForAll()
      }
      let onDisk = try totalFileSize(in: directory)
      #expect(onDisk <= limit)
      #expect(try await cache.totalSize == onDisk)
      #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).allSatisfy { !$0.hasPrefix(".") })
    }
  }
}
