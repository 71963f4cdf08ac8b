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
//
// The wire-fault suite runs these through a FaultProxy (URL is the proxy's); times are
// milliseconds since 1970 on the wall clock, which the test shares:
//   KilnPostgresChild writes URL TABLE COUNT            writes w0…w(COUNT-1) ("value-I") one after
//                                                      the other, 1 s operation timeout; prints
//                                                      "ok I MS" or "failed I unknown|known MS ERROR"
//   KilnPostgresChild reads URL TABLE KEY              reads KEY every 20 ms, 1 s operation timeout,
//                                                      until the test kills it; prints "ok I V MS"
//                                                      or "failed I MS ERROR" (a PostgresStoreError;
//                                                      anything else ends it with "error E")
//   KilnPostgresChild watch URL TABLE KEY               a PostgresCache (heartbeat 300 ms) read every
//                                                      20 ms; prints "listening BOOL SUBSCRIPTIONS"
//                                                      and "value V memory|table" when they change
//                                                      (memory: kept in the memory tier; and the first
//                                                      value after errors), "error E" once per error
//                                                      run; ends when the test kills it
//   KilnPostgresChild lease URL TABLE KEY LEASE_MS LOAD_MS  loads KEY once across processes: prints
//                                                      "loading T", "loaded T" around its LOAD_MS load,
//                                                      then "value V" or "error E"
//   KilnPostgresChild http URL TABLE ORIGIN GO_FILE LEASE_MS  one gateway instance: a shared HTTPCache
//                                                      over the table (request collapsing with a LEASE_MS
//                                                      lease); prints "ready", then once GO_FILE exists
//                                                      GETs ORIGIN (header X-Child: its pid) and prints
//                                                      "status S BODY" and "cache-status C"
import Foundation

#if PostgreSQL
  import KilnNetwork
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

  func milliseconds(since start: ContinuousClock.Instant) -> Int64 {
    let elapsed = start.duration(to: .now)
    return elapsed.components.seconds * 1_000 + elapsed.components.attoseconds / 1_000_000_000_000_000
  }

  func wallMilliseconds() -> Int64 {
    Int64(Date().timeIntervalSince1970 * 1_000)
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
      case "writes":
        let count = Int(arguments[4]) ?? 0
        let faulty = try await PostgresStore<String, String>(
          client: client, table: table, operationTimeout: .seconds(1))
        say("ready")
        for index in 0..<count {
          let started = ContinuousClock.now
          do {
            try await faulty.setValue("value-\(index)", forKey: "w\(index)", expiresAt: nil)
            say("ok \(index) \(milliseconds(since: started))")
          } catch let error as PostgresStoreError {
            let outcome = error.isOutcomeUnknown ? "unknown" : "known"
            say("failed \(index) \(outcome) \(milliseconds(since: started)) \(error)")
          }
          try await Task.sleep(for: .milliseconds(30))
        }
        say("done")
      case "reads":
        let faulty = try await PostgresStore<String, String>(
          client: client, table: table, operationTimeout: .seconds(1))
        say("ready")
        var index = 0
        while true {
          let started = ContinuousClock.now
          do {
            let value = try await faulty.value(forKey: key) ?? "nil"
            say("ok \(index) \(value) \(milliseconds(since: started))")
          } catch let error as PostgresStoreError {
            say("failed \(index) \(milliseconds(since: started)) \(error)")
          }
          index += 1
          try await Task.sleep(for: .milliseconds(20))
        }
      case "watch":
        let faulty = try await PostgresStore<String, String>(
          client: client, table: table, operationTimeout: .seconds(1))
        let cache = PostgresCache(
          memory: MemoryCache<String, String>(countLimit: 100), store: faulty, reconnectDelay: .milliseconds(100),
          heartbeatInterval: .milliseconds(300))
        group.addTask { await cache.run() }
        var listening = ""
        var value = ""
        var failing = false
        while true {
          let subscription = "listening \(cache.isListening) \(cache.subscriptionCount)"
          if subscription != listening {
            say(subscription)
            listening = subscription
          }
          do {
            let found = try await cache.value(forKey: key) ?? "nil"
            let read = "value \(found) \(cache.memory[key] == nil ? "table" : "memory")"
            failing = false
            if read != value {
              say(read)
              value = read
            }
          } catch {
            if !failing { say("error \(error)") }
            // The next value read is printed, whatever it is.
            failing = true
            value = ""
          }
          try await Task.sleep(for: .milliseconds(20))
        }
      case "lease":
        let lease = Duration.milliseconds(Int(arguments[5]) ?? 3_000)
        let load = Duration.milliseconds(Int(arguments[6]) ?? 1_000)
        let faulty = try await PostgresStore<String, String>(
          client: client, table: table, operationTimeout: .seconds(1))
        say("ready")
        do {
          let value = try await faulty.value(forKey: key, lease: lease) {
            say("loading \(wallMilliseconds())")
            try await Task.sleep(for: load)
            say("loaded \(wallMilliseconds())")
            return "child-\(ProcessInfo.processInfo.processIdentifier)"
          }
          say("value \(value)")
        } catch {
          say("error \(error)")
        }
      case "http":
        let responses = try await PostgresStore<String, Data>(client: client, table: table)
        let collapsing = RequestCollapsing(
          lease: .milliseconds(Int(arguments[6])!), waitTimeout: .seconds(60), pollInterval: .milliseconds(10))
        let cache = HTTPCache(store: responses, policy: .shared, collapsing: collapsing)
        let chain = RequestChain(transport: URLSessionTransport(), middleware: [HTTPCaching(cache)])
        say("ready")
        try await waitForFile(arguments[5])
        let request = HTTPRequest(
          url: URL(string: key)!, headers: ["X-Child": "\(ProcessInfo.processInfo.processIdentifier)"])
        do {
          let response = try await chain.send(request)
          say("status \(response.status) \(String(decoding: response.body, as: UTF8.self))")
          say("cache-status \(response.headers.values(for: "Cache-Status").last ?? "-")")
        } catch {
          say("error \(error)")
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
