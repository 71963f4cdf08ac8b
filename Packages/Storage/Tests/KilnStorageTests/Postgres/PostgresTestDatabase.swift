#if PostgreSQL
  import Foundation
  import KilnStorage
  import PostgresNIO

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

    /// The repository's root, for `Scripts/lib/postgres.sh`.
    static var repositoryRoot: URL {
      var url = URL(fileURLWithPath: #filePath)
      for _ in 0..<6 { url.deleteLastPathComponent() }
      return url
    }

    /// Runs `Scripts/lib/postgres.sh` with `arguments`; returns its standard output.
    @discardableResult
    static func script(_ arguments: String...) throws -> String {
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/bin/bash")
      process.arguments = [repositoryRoot.appendingPathComponent("Scripts/lib/postgres.sh").path] + arguments
      let output = Pipe()
      process.standardOutput = output
      try process.run()
      let data = output.fileHandleForReading.readDataToEndOfFile()
      process.waitUntilExit()
      guard process.terminationStatus == 0 else {
        throw Unavailable(
          description: "postgres.sh \(arguments.joined(separator: " ")) exited with \(process.terminationStatus)")
      }
      return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
  }
#endif
