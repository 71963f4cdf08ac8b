// One node of KilnStorageTests' multi-process PostgreSQL suites, driven through its
// arguments and standard output (one line per event).
//
//   KilnPostgresChild load URL TABLE KEY GO_FILE       misses KEY once GO_FILE exists; the
//                                                      origin load takes 500 ms and prints "loaded"
//   KilnPostgresChild cache URL TABLE KEY GO_FILE WRITE  caches KEY ("cached V"), then, once
//                                                      GO_FILE exists, writes WRITE if it is not
//                                                      "-"; prints "invalidated K" and "value V"
//   KilnPostgresChild hold URL TABLE KEY LEASE_MS      takes KEY's load lease ("loading"), never
//                                                      finishes: the test kills it
import Foundation

#if PostgreSQL
  import KilnStorage
  import PostgresNIO

  /// Writes one line, unbuffered: the test reads it through a pipe.
  func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
  }

  func waitForFile(_ path: String) async throws {
    while !FileManager.default.fileExists(atPath: path) {
      try await Task.sleep(for: .milliseconds(2))
    }
  }

  let arguments = CommandLine.arguments
  guard arguments.count >= 5 else {
    say("error usage")
    exit(2)
  }
  let (mode, url, table, key) = (arguments[1], arguments[2], arguments[3], arguments[4])

  do {
    let client = PostgresClient(configuration: try PostgresStore<String, String>.configuration(url: url))
    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask { await client.run() }
      let store = try await PostgresStore<String, String>(client: client, table: table)
      switch mode {
      case "load":
        say("ready")
        try await waitForFile(arguments[5])
        let value = try await store.value(forKey: key, lease: .seconds(10)) {
          try await Task.sleep(for: .milliseconds(500))
          say("loaded")
          return "origin-\(ProcessInfo.processInfo.processIdentifier)"
        }
        say("value \(value)")
      case "cache":
        let cache = PostgresCache(
          memory: MemoryCache<String, String>(countLimit: 100), store: store,
          onInvalidate: { key in say("invalidated \(key ?? "*")") })
        group.addTask { await cache.run() }
        await cache.waitUntilSubscribed()
        let cached = try await cache.value(forKey: key)
        say("cached \(cached ?? "nil")")
        // The value is now in memory: a second read must not need the table.
        guard cache.memory[key] != nil else {
          say("error not in memory")
          exit(1)
        }
        try await waitForFile(arguments[5])
        let write = arguments[6]
        if write != "-" {
          try await cache.setValue(write, forKey: key)
          say("wrote")
        } else {
          while cache.memory[key] != nil { try await Task.sleep(for: .milliseconds(5)) }
          let value = try await cache.value(forKey: key)
          say("value \(value ?? "nil")")
        }
      case "hold":
        let lease = Duration.milliseconds(Int(arguments[5]) ?? 2_000)
        _ = try await store.value(forKey: key, lease: lease) {
          say("loading")
          try await Task.sleep(for: .seconds(3_600))
          return "never"
        }
      default:
        say("error unknown mode \(mode)")
        exit(2)
      }
      group.cancelAll()
    }
    exit(0)
  } catch {
    say("error \(error)")
    exit(1)
  }
#else
  print("error KilnPostgresChild needs the PostgreSQL trait")
  exit(2)
#endif
