import Foundation
import KilnStorage
import KilnTesting
import Testing

/// A child process writes to a store in a loop and is killed with SIGKILL at a random
/// moment, many times; after each kill the store must open and every key must read as a
/// complete old or new value — never garbage — and never older than a write the child had
/// finished (acknowledged) before it died.
@Suite("Crash safety", .serialized, .timeLimit(.minutes(5)))
struct CrashSafetyTests {
  static let kills = 50
  static let keyCount = 12

  enum Store: String, CaseIterable, Sendable {
    case disk, serializable, sqlite
  }

  @Test("every key reads a complete value after each of 50 SIGKILLs of a writing child", arguments: Store.allCases)
  func killedWriter(store: Store) async throws {
    let writer = try CrashWriter.locate()
    try await withTemporaryDirectory { directory in
      let target = store == .sqlite ? directory.appendingPathComponent("crash.sqlite") : directory
      var lowerBounds: [String: Int] = [:]
      var generator = SeededRandomNumberGenerator(seed: TestSeed.current)
      var totalAcks = 0
      for kill in 0..<Self.kills {
        let child = try ChildProcess(
          executable: writer,
          arguments: [store.rawValue, target.path, "loop", "\(kill * 1_000_000)", "\(Self.keyCount)"])
        // Kill after a random number of acknowledged writes, plus a random delay, so the
        // signal lands anywhere: inside a write, a rename, a compaction, a commit.
        let acksBeforeKill = Int.random(in: 1...30, using: &generator)
        var acks: [(String, Int)] = []
        while acks.count < acksBeforeKill {
          guard let line = try await child.nextLine() else { break }
          if let ack = Self.parseAck(line) { acks.append(ack) }
        }
        try #require(acks.count == acksBeforeKill, "the child stopped early (kill \(kill))")
        usleep(UInt32.random(in: 0..<3_000, using: &generator))
        child.kill()
        acks += try await child.linesToEnd().compactMap(Self.parseAck)
        totalAcks += acks.count
        for (key, generation) in acks { lowerBounds[key] = max(lowerBounds[key] ?? -1, generation) }

        let values = try await Self.readAll(store, at: target)
        for index in 0..<Self.keyCount {
          let key = "k\(index)"
          let value = values[key] ?? nil
          if let bound = lowerBounds[key] {
            let value = try #require(value, "kill \(kill): \(key) was acknowledged at \(bound) but is missing")
            #expect(value.isIntact(for: key), "kill \(kill): \(key) holds a torn value")
            #expect(value.sequence >= bound, "kill \(kill): \(key) went back from \(bound) to \(value.sequence)")
            lowerBounds[key] = max(bound, value.sequence)
          } else if let value {
            #expect(value.isIntact(for: key), "kill \(kill): \(key) holds a torn value")
          }
        }
      }
      #expect(totalAcks >= Self.kills)
    }
  }

  static func parseAck(_ line: String) -> (String, Int)? {
    let parts = line.split(separator: " ")
    guard parts.count == 3, parts[0] == "ack", let generation = Int(parts[2]) else { return nil }
    return (String(parts[1]), generation)
  }

  /// Opens the store as a fresh process would and reads every key.
  static func readAll(_ store: Store, at url: URL) async throws -> [String: CheckedValue?] {
    var values: [String: CheckedValue?] = [:]
    let keys = (0..<keyCount).map { "k\($0)" }
    switch store {
    case .disk:
      let cache = try DiskCache<String, CheckedValue>(directory: url)
      for key in keys { values[key] = try await cache.value(forKey: key) }
      // No leftover temporary file may pass for an entry, and every entry file decodes.
      #expect(try await cache.count <= keyCount)
    case .serializable:
      let cache = try SerializableCache<String, CheckedValue>.load(name: "crash", directory: url, entryLifetime: nil)
      for key in keys { values[key] = cache[key] }
      #expect(cache.recovery.setAside == nil)
      #expect(cache.recovery.undecodableRecords == 0)
    case .sqlite:
      let database = try SQLiteStore<String, CheckedValue>(url: url)
      for key in keys { values[key] = try await database.value(forKey: key) }
      await database.close()
    }
    return values
  }

  @Test("two processes writing one SQLite file at once lose no committed write")
  func twoProcessesShareSQLite() async throws {
    let writer = try CrashWriter.locate()
    try await withTemporaryDirectory { directory in
      let url = directory.appendingPathComponent("shared.sqlite")
      let count = 150
      let children = try ["a", "b"].map { prefix in
        try ChildProcess(executable: writer, arguments: ["sqlite", url.path, "batch", prefix, "\(count)"])
      }
      for child in children {
        #expect(try await child.nextLine(timeout: .seconds(120)) == "done")
        #expect(child.wait() == 0)
      }
      let store = try SQLiteStore<String, CheckedValue>(url: url)
      for prefix in ["a", "b"] {
        for index in 0..<count {
          let key = "\(prefix)-\(index)"
          let value = try await store.value(forKey: key)
          #expect(value?.isIntact(for: key) == true, "\(key) was lost")
          #expect(value?.sequence == index)
        }
      }
      for index in 0..<20 {
        let value = try await store.value(forKey: "shared-\(index)")
        #expect(value?.isIntact(for: "shared-\(index)") == true)
      }
      #expect(try await store.count == 2 * count + 20)
    }
  }
}
