import Foundation
import KilnRepositoryNetwork
import KilnTesting
import Testing
import _KilnSynchronization
import _KilnTestServer

/// A child process writes through a repository's outbox (a SQLite file; with the PostgreSQL
/// trait, also a table on the tests' PostgreSQL server) to an origin with an idempotency
/// table, and is killed with SIGKILL at a random moment, 50 times; a last child drains what is
/// left. Every acknowledged change must be applied exactly once, in order per scope, and
/// nothing else applied twice or invented.
@Suite("Outbox kill test", .serialized, .timeLimit(.minutes(5)))
struct OutboxKillTests {
  static let kills = 50
  static let writesPerChild = 100

  enum Store: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    #if PostgreSQL
      case postgres
    #endif
    var testDescription: String { rawValue }

    /// The child's `<outbox>` argument: a file in `directory`, or a new table on the server.
    func argument(in directory: URL) throws -> String {
      switch self {
      case .sqlite:
        return directory.appendingPathComponent("outbox.sqlite").path
      #if PostgreSQL
        case .postgres:
          guard let url = ProcessInfo.processInfo.environment["KILN_POSTGRES_URL"], !url.isEmpty else {
            throw TestError("KILN_POSTGRES_URL is not set: run Scripts/test.sh, which starts a throwaway PostgreSQL")
          }
          return "\(url)#kiln_kill_\(String(UInt64.random(in: 1...UInt64.max), radix: 16))"
      #endif
      }
    }
  }

  @Test(
    "50 SIGKILLs of a writing child: every acknowledged change applied exactly once, in order per scope",
    arguments: Store.allCases)
  func killedWriters(store: Store) async throws {
    let child = try TestExecutable.locate("KilnOutboxChild", environmentVariable: "KILN_OUTBOX_CHILD")
    let origin = IdempotentOrigin()
    origin.state.withLock { $0.latency = 0...5 }
    let server = try await TestServer.start { origin.handle($0) }
    try await withTemporaryDirectory { directory in
      let outbox = try store.argument(in: directory)
      let baseURL = server.baseURL.absoluteString
      var generator = SeededRandomNumberGenerator(seed: TestSeed.current)
      var acknowledged: [(scope: String, value: Int)] = []
      for kill in 0..<Self.kills {
        let first = kill * 1_000
        let process = try ChildProcess(
          executable: child, arguments: [outbox, baseURL, "write", "\(first)", "\(Self.writesPerChild)"])
        // Kill after a random number of acknowledged changes, plus up to 3 ms, so that the
        // signal lands anywhere: inside an append, a send, an answer, a removal.
        let acksBeforeKill = Int.random(in: 1...Self.writesPerChild, using: &generator)
        var acks = 0
        while acks < acksBeforeKill {
          guard let line = try await process.nextLine() else { break }
          if let ack = Self.parseAck(line) {
            acknowledged.append(ack)
            acks += 1
          }
        }
        try #require(acks == acksBeforeKill, "the child stopped early (kill \(kill)): \(process.standardError())")
        usleep(UInt32.random(in: 0..<3_000, using: &generator))
        process.kill()
        acknowledged += try await process.linesToEnd().compactMap(Self.parseAck)
      }
      // A last child sends what is left.
      let drain = try ChildProcess(executable: child, arguments: [outbox, baseURL, "drain"])
      let last = try await drain.nextLine(timeout: .seconds(60))
      #expect(last == "drained 0 0", "the outbox ends empty, nothing quarantined: \(String(describing: last))")
      _ = drain.wait()

      let applied = origin.applied
      var count: [String: Int] = [:]
      for change in applied { count["\(change.param) \(change.value)", default: 0] += 1 }
      for (scope, value) in acknowledged {
        #expect(
          count["\(scope) \(value)"] == 1,
          "\(scope) = \(value) was acknowledged; applied \(count["\(scope) \(value)"] ?? 0) times")
      }
      #expect(count.values.allSatisfy { $0 == 1 }, "no change is applied twice")
      for scope in (0..<8).map({ "s\($0)" }) {
        let values = applied.filter { $0.param == scope }.map(\.value)
        #expect(values == values.sorted() && Set(values).count == values.count, "\(scope): applied in order")
        #expect(
          values.allSatisfy { $0 % 8 == Int(scope.dropFirst())! && $0 % 1_000 < Self.writesPerChild },
          "\(scope): only changes that were made")
      }
      #expect(acknowledged.count >= Self.kills)
      #expect(applied.count >= acknowledged.count)
      // The kills did land mid-send: changes were sent again after a restart, with their key.
      var sends: [String: Int] = [:]
      for request in server.requests where request.method == "PUT" {
        sends[request.headers["idempotency-key"] ?? "", default: 0] += 1
      }
      let resent = sends.values.count { $0 > 1 }
      print("OutboxKillTests: \(acknowledged.count) acknowledged, \(applied.count) applied, \(resent) sent again")
      #expect(resent > 0, "no change was sent again: the kills never landed between a send and its answer")
    }
    try await server.stop()
  }

  static func parseAck(_ line: String) -> (scope: String, value: Int)? {
    let parts = line.split(separator: " ")
    guard parts.count == 3, parts[0] == "ack", let value = Int(parts[2]) else { return nil }
    return (String(parts[1]), value)
  }
}
