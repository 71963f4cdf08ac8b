#if PostgreSQL
  import Foundation
  import KilnStorage
  import KilnTesting
  import PostgresNIO

  #if canImport(Glibc)
    import Glibc
  #endif

  /// The PostgreSQL server of the tests: `KILN_POSTGRES_URL`, which `Scripts/test.sh` sets
  /// after starting a throwaway cluster. Without it every PostgreSQL test fails; none skips.
  enum PostgresTestDatabase {
    struct Unavailable: Error, CustomStringConvertible {
      var description: String
    }

    static func url() throws -> String {
      guard let url = ProcessInfo.processInfo.environment["KILN_POSTGRES_URL"], !url.isEmpty else {
        throw Unavailable(
          description: "KILN_POSTGRES_URL is not set: run Scripts/test.sh (it starts a throwaway PostgreSQL) "
            + "or export the URL of a server")
      }
      return url
    }

    /// A table name no other test uses.
    static func tableName() -> String {
      "kiln_test_\(String(UInt64.random(in: 1...UInt64.max), radix: 16))"
    }

    /// Runs `body` with a running client on `url` (the tests' server by default).
    @discardableResult
    static func withClient<Result: Sendable>(
      url: String? = nil,
      configure: (inout PostgresClient.Configuration) -> Void = { _ in },
      _ body: (PostgresClient) async throws -> Result
    ) async throws -> Result {
      var configuration = try PostgresStore<String, String>.configuration(url: url ?? self.url())
      configure(&configuration)
      let client = PostgresClient(configuration: configuration)
      return try await withThrowingTaskGroup(of: Void.self, returning: Result.self) { group in
        group.addTask { await client.run() }
        defer { group.cancelAll() }
        return try await body(client)
      }
    }

    /// Holds an `ACCESS EXCLUSIVE` lock on `table` (reads and writes wait) while `body` runs.
    static func whileLocked(_ table: String, _ body: () async throws -> Void) async throws {
      try await withClient { locker in
        let locked = Gate()
        let unlock = Gate()
        let holder = Task {
          do {
            try await locker.withTransaction(logger: Logger(label: "test")) { connection in
              try await connection.query(
                "LOCK TABLE \(unescaped: table) IN ACCESS EXCLUSIVE MODE", logger: Logger(label: "test"))
              locked.open()
              try await unlock.wait()
            }
          } catch {
            locked.open()  // the body runs (and fails) instead of waiting for the time limit
            throw error
          }
        }
        try await locked.wait()
        do {
          try await body()
        } catch {
          unlock.open()
          _ = try? await holder.value
          throw error
        }
        unlock.open()
        try await holder.value
      }
    }

    /// The repository's root, for `Scripts/lib/postgres.sh`.
    static var repositoryRoot: URL {
      var url = URL(fileURLWithPath: #filePath)
      for _ in 0..<6 { url.deleteLastPathComponent() }
      return url
    }

    /// Runs `Scripts/lib/postgres.sh` with `arguments`; returns its standard output.
    ///
    /// The script (initdb, `pg_ctl -w`) takes seconds: it runs on a thread of its own, so
    /// that it never blocks one of the few threads of Swift's cooperative pool (two on a
    /// two-core machine), which the client's continuations need meanwhile.
    @discardableResult
    static func script(_ arguments: String...) async throws -> String {
      try await runOnOwnThread { try runScript(arguments) }
    }

    /// Runs the script with `posix_spawn` and `waitpid`, not Foundation's `Process`.
    ///
    /// On Linux, `Process` learns that a child exited when a socket the child inherited is
    /// closed by every process holding it; `pg_ctl start` leaves the server running with
    /// that socket, so `waitUntilExit()` never returned after `start`, `resume` or `restart`
    /// (that was the fault suite's hang). Here the script keeps no descriptor but standard
    /// input, output (a file) and error, and its exit is read with `waitpid`.
    private static func runScript(_ arguments: [String]) throws -> String {
      let outputPath = FileManager.default.temporaryDirectory
        .appendingPathComponent("kiln-postgres-\(UUID().uuidString).out").path
      defer { unlink(outputPath) }
      var actions = posix_spawn_file_actions_t()
      posix_spawn_file_actions_init(&actions)
      defer { posix_spawn_file_actions_destroy(&actions) }
      posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
      let script = repositoryRoot.appendingPathComponent("Scripts/lib/postgres.sh").path
      // Every descriptor past standard error (the test's sockets) is closed before the script
      // runs, so that the server it starts holds none of them.
      let closeInherited =
        #"for fd in /proc/$$/fd/*; do fd=${fd##*/}; if ((fd > 2)); then exec {fd}>&-; fi; done 2>/dev/null; "#
        + #"exec /bin/bash "$0" "$@""#
      let argv = (["/bin/bash", "-c", closeInherited, script] + arguments).map { strdup($0) } + [nil]
      defer { for argument in argv { free(argument) } }
      var pid: pid_t = 0
      let spawned = posix_spawn(&pid, "/bin/bash", &actions, nil, argv, environ)
      guard spawned == 0 else {
        throw Unavailable(description: "postgres.sh could not be started: errno \(spawned)")
      }
      var status: Int32 = 0
      while waitpid(pid, &status, 0) < 0 {
        guard errno == EINTR else { throw Unavailable(description: "waitpid failed: errno \(errno)") }
      }
      let exited = status & 0x7F == 0
      let code = (status >> 8) & 0xFF
      guard exited, code == 0 else {
        throw Unavailable(
          description: "postgres.sh \(arguments.joined(separator: " ")) "
            + (exited ? "exited with \(code)" : "was killed by signal \(status & 0x7F)"))
      }
      let output = FileManager.default.contents(atPath: outputPath) ?? Data()
      return String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
  }
#endif
