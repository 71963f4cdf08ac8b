// 6. Two processes share a PostgreSQL store (trait `PostgreSQL`): one origin load for a key
// both miss, and a write in one process drops the other's memory copy.
//
// Uses KILN_POSTGRES_URL when it is set; otherwise starts a throwaway server with
// Scripts/lib/postgres.sh (from the repository root) and stops it afterwards.

import Foundation
import KilnStorage
import Synchronization

#if PostgreSQL
  import PostgresNIO
#endif

/// When this process was started as the demo's second PostgreSQL node, runs that node and
/// exits; otherwise returns at once.
func runPostgresNodeIfRequested() async {
  #if PostgreSQL
    let arguments = CommandLine.arguments
    guard arguments.count == 4, arguments[1] == "--postgres-node" else { return }
    do {
      try await PostgresDemo.node(url: arguments[2], table: arguments[3])
      exit(0)
    } catch {
      PostgresDemo.say("node error \(error)")
      exit(1)
    }
  #endif
}

/// Step 6 of the demo.
func runPostgresStep() async throws {
  step("8. Two processes share a PostgreSQL store")
  #if PostgreSQL
    try await PostgresDemo.run()
  #else
    print("   skipped: build with the PostgreSQL trait (swift run --traits PostgreSQL kiln-demo)")
  #endif
}

#if PostgreSQL
  enum PostgresDemo {
    static func run() async throws {
      var url = ProcessInfo.processInfo.environment["KILN_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
      var cluster: String?
      let script = FileManager.default.currentDirectoryPath + "/Scripts/lib/postgres.sh"
      if url == nil, FileManager.default.isExecutableFile(atPath: script) {
        print("   KILN_POSTGRES_URL is not set: starting a throwaway PostgreSQL with Scripts/lib/postgres.sh")
        if let created = try? shell(script, "start"), created.split(separator: " ").count == 2 {
          url = String(created.split(separator: " ")[0])
          cluster = String(created.split(separator: " ")[1])
        }
      }
      defer { if let cluster { _ = try? shell(script, "stop", cluster) } }
      guard let url else {
        print("   skipped: set KILN_POSTGRES_URL=postgres://user@host:5432/database to run this step")
        return
      }

      let table = "kiln_demo_\(String(UInt32.random(in: 1...UInt32.max), radix: 16))"
      let client = PostgresClient(configuration: try PostgresStore<String, String>.configuration(url: url))
      try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await client.run() }
        defer { group.cancelAll() }
        let store = try await PostgresStore<String, String>(client: client, table: table)
        let cache = PostgresCache(memory: MemoryCache<String, String>(countLimit: 100), store: store)
        group.addTask { await cache.run() }
        await cache.waitUntilSubscribed()
        print("   table \(table) at \(url)")

        let node = Process()
        node.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        node.arguments = ["--postgres-node", url, table]
        let output = Pipe()
        node.standardOutput = output
        try node.run()
        let lines = LineReader(output.fileHandleForReading)
        check(lines.next() == "ready", "the second process subscribed")

        // Both processes miss "report" at once: one of them loads it from the origin.
        let loads = Counter()
        let (value, time) = try await timed {
          try await cache.value(forKey: "report") {
            try await Task.sleep(for: .milliseconds(300))
            loads.add()
            return "report built by process \(ProcessInfo.processInfo.processIdentifier)"
          }
        }
        let nodeLoaded = lines.next() == "loaded"
        let nodeValue = lines.next() ?? ""
        let origins = loads.value + (nodeLoaded ? 1 : 0)
        print("   both processes missed \"report\": \(origins) origin load, both got \"\(value)\" (\(show(time)))")
        check(origins == 1 && nodeValue == "value \(value)", "one origin load, one value")

        // A write here reaches the other process's memory tier through NOTIFY.
        try await cache.setValue("report v2", forKey: "report")
        let invalidated = lines.next() ?? ""
        let reread = lines.next() ?? ""
        print(
          "   this process wrote \"report v2\": the other \(invalidated.replacingOccurrences(of: "invalidated", with: "dropped its memory copy of")) and now reads \"\(reread.dropFirst(6))\""
        )
        check(reread == "value report v2", "the other process sees the write")
        var status: Int32 = 0
        _ = waitpid(node.processIdentifier, &status, 0)  // see `shell(_:)` on waitUntilExit
      }
    }

    /// The second process: subscribes, misses "report" with the first, then waits for the
    /// first's write to invalidate its memory copy.
    static func node(url: String, table: String) async throws {
      let client = PostgresClient(configuration: try PostgresStore<String, String>.configuration(url: url))
      try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await client.run() }
        defer { group.cancelAll() }
        let store = try await PostgresStore<String, String>(client: client, table: table)
        let invalidations = AsyncStream<String>.makeStream()
        let cache = PostgresCache(
          memory: MemoryCache<String, String>(countLimit: 100), store: store,
          onInvalidate: { invalidations.continuation.yield($0 ?? "*") })
        group.addTask { await cache.run() }
        await cache.waitUntilSubscribed()
        say("ready")
        let loaded = Counter()
        let value = try await cache.value(forKey: "report") {
          try await Task.sleep(for: .milliseconds(300))
          loaded.add()
          return "report built by process \(ProcessInfo.processInfo.processIdentifier)"
        }
        say(loaded.value == 1 ? "loaded" : "waited")
        say("value \(value)")
        if cache.memory["report"] == nil { _ = try await cache.value(forKey: "report") }
        // The notification of the first write (the loaded value) may still arrive after this
        // point: a reread that finds the value unchanged waits for the next invalidation.
        for await key in invalidations.stream {
          let reread = try await cache.value(forKey: "report")
          guard let reread, reread != value else { continue }
          say("invalidated \(key)")
          say("value \(reread)")
          break
        }
      }
    }

    /// Writes one line to the first process, unbuffered (a pipe).
    static func say(_ line: String) {
      FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func shell(_ arguments: String...) throws -> String {
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/bin/bash")
      process.arguments = arguments
      let output = Pipe()
      process.standardOutput = output
      try process.run()
      let data = output.fileHandleForReading.readDataToEndOfFile()
      // Not `waitUntilExit()`: on Linux it can miss the child's exit once the main thread has
      // handed over to Dispatch, and wait forever. `waitpid` returns when the child has exited,
      // or at once when Foundation already reaped it.
      var status: Int32 = 0
      _ = waitpid(process.processIdentifier, &status, 0)
      return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
  }

  /// Reads a child's output line by line (blocking; the demo's child writes a few lines).
  final class LineReader {
    private let handle: FileHandle
    private var buffer = Data()

    init(_ handle: FileHandle) {
      self.handle = handle
    }

    func next() -> String? {
      while true {
        if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
          let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
          buffer.removeSubrange(buffer.startIndex...newline)
          return line
        }
        let chunk = handle.availableData
        if chunk.isEmpty { return nil }
        buffer.append(chunk)
      }
    }
  }

  /// A count shared with loaders.
  final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    var value: Int { count.load(ordering: .relaxed) }
    func add() { count.add(1, ordering: .relaxed) }
  }
#endif
