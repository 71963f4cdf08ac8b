// The child process of KilnRepositoryNetworkTests' outbox kill test: a repository writing
// through an outbox on a SQLite file (or, with the PostgreSQL trait, in a PostgreSQL table)
// to an origin over HTTP, killed at random moments.
//
//   KilnOutboxChild <outbox> <origin base URL> write <first value> <count>
//   KilnOutboxChild <outbox> <origin base URL> drain
//
// <outbox> is a SQLite file's path, or `postgres://…#<table>`: a server's URL and a table.
//
// `write` attaches (the changes left by an earlier child show again and are sent first),
// then makes `count` changes over 8 scopes (`s0`…`s7`; change i sets scope i % 8 to
// first + i), printing `ack <scope> <value>` as each `mutate` returns (it is durable then),
// and keeps sending until killed. `drain` sends what is left, prints `drained` and exits.

import Foundation
import KilnNetwork
import KilnRepositoryNetwork
import KilnTesting

#if PostgreSQL
  import PostgresNIO
#endif

/// `PUT /counts/<scope>` with the value as JSON.
struct CountTarget: TargetGroup {
  var baseURL: URL
  var scope: String
  var value: Int

  var path: String { "counts/\(scope)" }
  var method: HTTPMethod { .put }
  var task: NetworkTask { .body(.json(value)) }
}

let arguments = CommandLine.arguments
guard arguments.count >= 4, let baseURL = URL(string: arguments[2]) else {
  FileHandle.standardError.write(Data("usage: KilnOutboxChild <outbox> <base URL> write|drain …\n".utf8))
  exit(2)
}
/// The store `argument` names: a SQLite file, or `postgres://…#<table>`.
func openStore(_ argument: String) async throws -> any OutboxStore {
  #if PostgreSQL
    if argument.hasPrefix("postgres"), let table = URLComponents(string: argument)?.fragment {
      let client = PostgresClient(configuration: try PostgresStore<String, Data>.configuration(url: argument))
      Task { await client.run() }  // until the process ends
      return try await PostgresOutboxStore(client: client, table: table)
    }
  #endif
  return try SQLiteOutboxStore(url: URL(fileURLWithPath: argument))
}

let store = try await openStore(arguments[1])
// Retries come fast and never run out: the test kills the child, it never gives up.
let options = OutboxOptions(
  retry: RetryPolicy(maxAttempts: 1_000_000, backoff: .constant(.milliseconds(5)), jitter: .none),
  maxConcurrentSends: 4, probeInterval: .milliseconds(20))
/// The outbox of `store`, once the killed child's sender lock is free: the system frees a
/// file's at once, the server a session's once it sees the connection gone.
func openOutbox() async throws -> Outbox {
  let deadline = ContinuousClock.now.advanced(by: .seconds(10))
  while true {
    do {
      return try await Outbox.open(store, options: options)
    } catch {
      guard case .storeInUse = error, ContinuousClock.now < deadline else { throw error }
      try await Task.sleep(for: .milliseconds(20))
    }
  }
}
let outbox = try await openOutbox()
let repository = Repository<String, Int>()
let mutator = HTTPMutator<String, Int, Int, CountTarget>(
  handler: NetworkHandler(transport: URLSessionTransport(), retryPolicy: .never),
  apply: { value, _ in value },
  target: { value, scope in CountTarget(baseURL: baseURL, scope: scope, value: value) })
let writes = try await repository.writes(
  through: mutator, outbox: outbox, channel: "counts", paramCodec: .automatic, changeCodec: .automatic)

switch arguments[3] {
case "write":
  guard arguments.count == 6, let first = Int(arguments[4]), let count = Int(arguments[5]) else { exit(2) }
  for index in 0..<count {
    let scope = "s\(index % 8)"
    try await writes.mutate(scope, first + index)
    ChildOutput.say("ack \(scope) \(first + index)")
  }
  await outbox.waitUntilDrained()
  ChildOutput.say("drained")
  // Wait to be killed: the test decides when this child ends.
  try await Task.sleep(for: .seconds(3_600))
case "drain":
  await outbox.waitUntilDrained()
  let left = await outbox.entries.count
  let quarantined = try await store.quarantined().count
  ChildOutput.say("drained \(left) \(quarantined)")
default:
  exit(2)
}
