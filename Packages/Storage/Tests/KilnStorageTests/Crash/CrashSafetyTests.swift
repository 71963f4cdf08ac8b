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

  @Test("every acknowledged outbox append survives 50 SIGKILLs intact and in order; no acknowledged removal returns")
  func killedOutboxWriter() async throws {
    let writer = try CrashWriter.locate()
    try await withTemporaryDirectory { directory in
      let url = directory.appendingPathComponent("outbox.sqlite")
      var generator = SeededRandomNumberGenerator(seed: TestSeed.current)
      /// Generation of each acknowledged append, by sequence.
      var acknowledged: [UInt64: Int] = [:]
      var removed: Set<UInt64> = []
      /// Removals that had started when the child was killed: done or not.
      var removing: Set<UInt64> = []
      for kill in 0..<Self.kills {
        let child = try ChildProcess(
          executable: writer, arguments: ["outbox", url.path, "loop", "\(kill * 1_000_000)", "\(Self.keyCount)"])
        let acksBeforeKill = Int.random(in: 1...30, using: &generator)
        var lines: [String] = []
        while lines.count(where: { $0.hasPrefix("ack ") }) < acksBeforeKill {
          guard let line = try await child.nextLine() else { break }
          lines.append(line)
        }
        try #require(
          lines.count(where: { $0.hasPrefix("ack ") }) == acksBeforeKill, "the child stopped early (kill \(kill))")
        usleep(UInt32.random(in: 0..<3_000, using: &generator))
        child.kill()
        lines += try await child.linesToEnd()
        for line in lines {
          let parts = line.split(separator: " ")
          if parts.count == 3, parts[0] == "ack", let generation = Int(parts[1]), let sequence = UInt64(parts[2]) {
            acknowledged[sequence] = generation
          } else if parts.count == 2, parts[0] == "removing", let sequence = UInt64(parts[1]) {
            removing.insert(sequence)
          } else if parts.count == 2, parts[0] == "removed", let sequence = UInt64(parts[1]) {
            removed.insert(sequence)
          }
        }

        let store = try SQLiteOutboxStore(url: url)
        let loads = try await store.loadAll()
        await store.close()
        var entries: [UInt64: OutboxEntry] = [:]
        for load in loads {
          guard case .entry(let entry) = load else {
            Issue.record("kill \(kill): a damaged entry: \(load)")
            continue
          }
          entries[entry.sequence] = entry
          let value = try JSONDecoder().decode(CheckedValue.self, from: entry.record.change)
          let scope = String(decoding: entry.record.scope, as: UTF8.self)
          #expect(value.isIntact(for: scope), "kill \(kill): entry \(entry.sequence) holds a torn change")
          if let generation = acknowledged[entry.sequence] {
            #expect(value.sequence == generation, "kill \(kill): entry \(entry.sequence) holds another write")
          }
        }
        #expect(loads.map(\.sequence) == loads.map(\.sequence).sorted(), "kill \(kill): entries out of order")
        // Later appends hold later generations: the order is the order of the writes.
        let generations = loads.compactMap { load -> Int? in
          guard case .entry(let entry) = load else { return nil }
          return (try? JSONDecoder().decode(CheckedValue.self, from: entry.record.change))?.sequence
        }
        #expect(generations == generations.sorted(), "kill \(kill): writes out of order")
        for (sequence, generation) in acknowledged where !removing.contains(sequence) {
          #expect(entries[sequence] != nil, "kill \(kill): acknowledged append \(generation) (\(sequence)) was lost")
        }
        for sequence in removed {
          #expect(entries[sequence] == nil, "kill \(kill): removed entry \(sequence) came back")
        }
      }
      #expect(acknowledged.count >= Self.kills)
      #expect(!removed.isEmpty)
    }
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
