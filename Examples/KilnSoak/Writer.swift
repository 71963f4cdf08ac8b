import Foundation
import KilnStorage
import KilnTesting
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The writer child: `kiln-soak writer <sqlite file> <disk folder> <first sequence> <keys>`.
///
/// Writes `SoakValue(key: "w<sequence % keys>", sequence:)` to the shared SQLite table and
/// to the shared disk cache, one sequence after another, and prints `ack <sequence>` once
/// both writes have returned, until it is killed. A write that fails prints `error <what>`
/// and is not acknowledged.
enum WriterChild {
  static let table = "shared"

  static func run(_ arguments: [String]) async -> Never {
    guard arguments.count == 4, let first = Int(arguments[2]), let keys = Int(arguments[3]) else {
      FileHandle.standardError.write(Data("usage: kiln-soak writer <sqlite> <folder> <first> <keys>\n".utf8))
      exit(2)
    }
    do {
      let sqlite = try SQLiteStore<String, SoakValue>(url: URL(fileURLWithPath: arguments[0]), table: table)
      let disk = try DiskCache<String, SoakValue>(directory: URL(fileURLWithPath: arguments[1]))
      var sequence = first
      while true {
        let key = "w\(sequence % keys)"
        let value = SoakValue(key: key, sequence: sequence)
        do {
          try await sqlite.setValue(value, forKey: key)
          try await disk.setValue(value, forKey: key)
          ChildOutput.say("ack \(sequence)")
          sequence += 1
        } catch {
          ChildOutput.say("error \(String(describing: error).prefix(80))")
        }
        try? await Task.sleep(for: .milliseconds(2))
      }
    } catch {
      FileHandle.standardError.write(Data("kiln-soak writer: \(error)\n".utf8))
      exit(1)
    }
  }
}

/// Starts the writer child again and again, lets it write for a second or a few, kills it
/// with `SIGKILL`, and checks after each kill that every acknowledged write survived.
final class WriterSupervisor: Sendable {
  struct State {
    /// The newest acknowledged sequence number; -1 before the first.
    var lastAck = -1
    /// The newest acknowledged sequence number of each key.
    var ackedByKey: [String: Int] = [:]
    /// The highest sequence number any read saw.
    var highestRead = -1
    var starts = 0
  }

  let keys: Int
  private let executable: String
  private let sqlitePath: String
  private let diskPath: String
  private let stats: SoakStats
  let state = Mutex(State())

  init(executable: String, sqlitePath: String, diskPath: String, keys: Int, stats: SoakStats) {
    self.executable = executable
    self.sqlitePath = sqlitePath
    self.diskPath = diskPath
    self.keys = keys
    self.stats = stats
  }

  /// Records that a read saw `value` of the writer: it must be intact and its key must be the
  /// one its sequence number is written under.
  func sawValue(_ value: SoakValue, forKey key: String, in store: String) {
    guard value.isIntact, value.key == key, key == "w\(value.sequence % keys)" else {
      stats.corrupt("\(store): key \(key) read \(value.key)#\(value.sequence), intact: \(value.isIntact)")
      return
    }
    state.withLock { $0.highestRead = max($0.highestRead, value.sequence) }
  }

  /// Runs the kill-and-restart loop on a thread of its own until `end`, checking each time
  /// with `verify`, which returns the acknowledged writes missing from the stores.
  func run(until end: ContinuousClock.Instant, verify: @escaping @Sendable ([String: Int]) async -> Int) async {
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
      let thread = Thread { [self] in
        loop(until: end, verify: verify)
        done.resume()
      }
      thread.name = "soak-writer-supervisor"
      thread.start()
    }
  }

  private func loop(until end: ContinuousClock.Instant, verify: @escaping @Sendable ([String: Int]) async -> Int) {
    while ContinuousClock.now < end {
      let first = state.withLock { state in
        state.starts += 1
        return state.lastAck + 1
      }
      let child: ChildProcess
      do {
        child = try ChildProcess(
          executable: executable, arguments: ["writer", sqlitePath, diskPath, "\(first)", "\(keys)"])
      } catch {
        stats.error("writer: could not start (\(error))")
        Thread.sleep(forTimeInterval: 1)
        continue
      }
      let killAt = min(end, ContinuousClock.now + .milliseconds(Int.random(in: 500...4_000)))
      var exited = false
      while ContinuousClock.now < killAt {
        do {
          guard let line = try child.readLine(timeout: .milliseconds(100)) else {
            exited = true
            break
          }
          handle(line)
        } catch {
          continue  // no line within 100 ms
        }
      }
      if exited {
        let status = child.wait()
        stats.update { $0.writerCrashes += 1 }
        stats.error("writer: exited by itself with status \(status)")
      } else {
        child.kill()
        stats.update { $0.writerKills += 1 }
      }
      // Acknowledgements written before the kill are still in the pipe.
      for line in (try? child.remainingLines(timeout: .seconds(2))) ?? [] { handle(line) }
      let (acked, lastAck, highestRead) = state.withLock { ($0.ackedByKey, $0.lastAck, $0.highestRead) }
      // Only the write after the last acknowledged one can have been in flight.
      if highestRead > lastAck + 1 {
        stats.corrupt("writer: a read saw sequence \(highestRead), but only \(lastAck) was acknowledged")
      }
      let lost = Self.blocking { await verify(acked) }
      if lost > 0 { stats.update { $0.lostAckedWrites += lost } }
    }
  }

  private func handle(_ line: String) {
    if line.hasPrefix("ack "), let sequence = Int(line.dropFirst(4)) {
      state.withLock { state in
        state.lastAck = max(state.lastAck, sequence)
        state.ackedByKey["w\(sequence % keys)"] = sequence
      }
    } else if line.hasPrefix("error ") {
      stats.error("writer: \(Self.category(String(line.dropFirst(6))))")
    }
  }

  /// A short category for an error description: its first words.
  static func category(_ description: String) -> String {
    String(description.prefix(while: { $0 != "(" && $0 != ":" }).prefix(40))
  }

  private static func blocking<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
    let result = Mutex<T?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
      let value = await work()
      result.withLock { $0 = value }
      done.signal()
    }
    done.wait()
    return result.withLock { $0! }
  }
}
