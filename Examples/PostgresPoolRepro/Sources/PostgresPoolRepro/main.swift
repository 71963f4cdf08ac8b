// Reproduces a query through postgres-nio's PostgresClient that never returns after
// pg_terminate_backend killed pooled sessions, and measures workarounds.
// See README.md for the options and what the numbers mean.

import Foundation
import PostgresNIO
import Synchronization

// MARK: - Options

enum Kill: String { case listeners, others, none }
enum Guard: String {
  case none  // client.query, as an application would
  case wc  // client.withConnection { conn.query }, recording what the lease got (diagnostics, no protection)
  case check  // withConnection, skip a leased connection whose isClosed is true, retry
  case closeRace = "close-race"  // withConnection, race the query against connection.closeFuture, retry
  case listenerWait = "listener-wait"  // client.query; listeners hold a dead connection until its closeFuture fired
  case timeout  // client.query raced against a 2 s timer in an abandoned task, retry
  case onLoop = "on-loop"  // withConnection; check and write in one event-loop task (what KilnStorage does), retry
}

struct Options {
  var url = ProcessInfo.processInfo.environment["REPRO_POSTGRES_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"
  var iterations = 100
  var listeners = 2
  var kill = Kill.listeners
  var delayMs = 0.0
  var guardMode = Guard.none
  var watchdog = 10.0
  var idle = 0
  var verbose = false
  var demo = false

  static func parse() -> Options {
    var options = Options()
    var args = CommandLine.arguments.dropFirst().makeIterator()
    func value(_ name: String) -> String {
      guard let v = args.next() else { fatalError("\(name) needs a value") }
      return v
    }
    while let arg = args.next() {
      switch arg {
      case "--url": options.url = value(arg)
      case "--iterations", "-n": options.iterations = Int(value(arg))!
      case "--listeners": options.listeners = Int(value(arg))!
      case "--kill": options.kill = Kill(rawValue: value(arg))!
      case "--delay-ms": options.delayMs = Double(value(arg))!
      case "--guard": options.guardMode = Guard(rawValue: value(arg))!
      case "--watchdog": options.watchdog = Double(value(arg))!
      case "--idle": options.idle = Int(value(arg))!
      case "-v", "--verbose": options.verbose = true
      case "--demo": options.demo = true
      case "-h", "--help":
        print(
          """
          usage: PostgresPoolRepro [--url URL] [-n ITERATIONS] [--listeners N] [--kill listeners|others|none]
                                   [--delay-ms MS] [--idle N] [--guard none|wc|check|close-race|listener-wait|timeout|on-loop]
                                   [--watchdog SECONDS] [-v]
                 PostgresPoolRepro --demo [--url URL]  (a query on a connection whose closeFuture completed)
          """)
        exit(0)
      default: fatalError("unknown argument \(arg)")
      }
    }
    return options
  }
}

let options = Options.parse()
let noLog: Logger = {
  var logger = Logger(label: "repro")
  logger.logLevel = .critical
  return logger
}()

func configuration(_ url: String) -> PostgresClient.Configuration {
  let c = URLComponents(string: url)!
  return PostgresClient.Configuration(
    host: c.host!, port: c.port ?? 5432, username: c.user ?? "postgres", password: c.password,
    database: c.path.split(separator: "/").first.map(String.init), tls: .disable)
}

// MARK: - Small concurrency helpers

/// Resumes a continuation once, from whichever side gets there first.
final class Once<T: Sendable>: Sendable {
  private let state = Mutex<CheckedContinuation<T, Never>?>(nil)
  init(_ continuation: CheckedContinuation<T, Never>) { state.withLock { $0 = continuation } }
  func resume(_ value: T) {
    state.withLock { c in
      c?.resume(returning: value)
      c = nil
    }
  }
}

/// Runs `body` in an unstructured task and returns its result, or nil when it has not
/// finished after `seconds` (the task is then abandoned, still suspended).
func within<T: Sendable>(
  _ seconds: Double, _ body: @escaping @Sendable () async throws -> T
) async -> (result: Result<T, any Error>?, task: Task<Void, Never>) {
  let holder = Mutex<Task<Void, Never>?>(nil)
  let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, any Error>?, Never>) in
    let once = Once(continuation)
    let work = Task {
      do { once.resume(.success(try await body())) } catch { once.resume(.failure(error)) }
    }
    holder.withLock { $0 = work }
    Task {
      try? await Task.sleep(for: .seconds(seconds))
      once.resume(nil)
    }
  }
  return (result, holder.withLock { $0! })
}

struct Hung: Error {}
struct ClosedBeforeUse: Error {}
struct ClosedWhileWaiting: Error {}

/// A value behind a lock, shareable between tasks.
final class Locked<T: Sendable>: Sendable {
  private let mutex: Mutex<T>
  init(_ value: T) { mutex = Mutex(value) }
  func withLock<R>(_ body: (inout T) -> R) -> R { mutex.withLock { body(&$0) } }
}

/// Counts listener subscriptions and remembers the connections they run on.
final class Subscriptions: Sendable {
  private let state = Mutex<(count: Int, ids: [Int])>((0, []))
  func subscribed(_ id: Int) {
    state.withLock {
      $0.count += 1
      $0.ids.append(id)
    }
  }
  var count: Int { state.withLock { $0.count } }
  var ids: [Int] { state.withLock { $0.ids } }
}

// MARK: - The workload

func drain(_ rows: PostgresRowSequence) async throws {
  for try await _ in rows {}
}

func upsertQuery(_ key: String, _ value: String, channel: String) -> PostgresQuery {
  "WITH up AS (INSERT INTO repro_kv (k, v) VALUES (\(key), \(value)) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v RETURNING k) SELECT pg_notify(\(channel), k) FROM up"
}

/// What `PostgresCache.run()` does: listen on a leased connection, resubscribe after a loss.
func listenLoop(_ client: PostgresClient, channel: String, subscriptions: Subscriptions, waitForClose: Bool) async {
  while !Task.isCancelled {
    do {
      try await client.withConnection { connection in
        do {
          try await connection.listen(on: channel) { notifications in
            subscriptions.subscribed(connection.id)
            for try await _ in notifications {}
          }
        } catch {
          // The avoidance `listener-wait`: never hand a dead connection back to the pool
          // before the pool itself has learned (through closeFuture) that it is dead.
          // (Checking `connection.isClosed` first is not enough: the listener is failed a
          // moment before NIO marks the channel inactive.) Bounded, in case the connection
          // is still alive (a failed LISTEN).
          if waitForClose, !Task.isCancelled {
            _ = await within(1) { try await connection.closeFuture.get() }
          }
          throw error
        }
      }
    } catch {}
    do { try await Task.sleep(for: .seconds(1)) } catch { return }
  }
}

/// Throws ClosedBeforeUse for a connection that is already closed, after its closeFuture
/// completed: the pool then knows, and will not lease it again when we retry.
func refuseIfClosed(_ connection: PostgresConnection) async throws {
  guard connection.isClosed else { return }
  _ = await within(1) { try await connection.closeFuture.get() }
  throw ClosedBeforeUse()
}

func isConnectionClosedError(_ error: any Error) -> Bool {
  if error is ClosedBeforeUse || error is ClosedWhileWaiting || error is Hung { return true }
  if let e = error as? PSQLError {
    return e.code == .serverClosedConnection || e.code == .clientClosedConnection
  }
  return false
}

struct LeaseInfo: Sendable {
  var id: Int
  var closedAtLease: Bool
}

/// The write under test, with the selected guard. `leases` records the connections it got.
func guardedWrite(
  _ client: PostgresClient, _ query: PostgresQuery, mode: Guard, leases: Locked<[LeaseInfo]>, retries: Locked<Int>
) async throws {
  switch mode {
  case .none, .listenerWait:
    try await drain(client.query(query))

  case .wc:
    try await client.withConnection { connection in
      leases.withLock { $0.append(LeaseInfo(id: connection.id, closedAtLease: connection.isClosed)) }
      try await drain(connection.query(query, logger: noLog))
    }

  case .check, .closeRace, .timeout, .onLoop:
    var attempt = 0
    while true {
      do {
        switch mode {
        case .check:
          try await client.withConnection { connection in
            leases.withLock { $0.append(LeaseInfo(id: connection.id, closedAtLease: connection.isClosed)) }
            try await refuseIfClosed(connection)
            try await drain(connection.query(query, logger: noLog))
          }
        case .closeRace:
          try await client.withConnection { connection in
            leases.withLock { $0.append(LeaseInfo(id: connection.id, closedAtLease: connection.isClosed)) }
            try await refuseIfClosed(connection)
            try await raceAgainstClose(connection) { try await drain(connection.query(query, logger: noLog)) }
          }
        case .onLoop:
          // The write leaves from the connection's event loop in the task that saw the channel
          // active: an active channel still has its handlers, so the write cannot be dropped.
          try await client.withConnection { connection in
            leases.withLock { $0.append(LeaseInfo(id: connection.id, closedAtLease: connection.isClosed)) }
            do {
              _ = try await connection.eventLoop.flatSubmit { () -> EventLoopFuture<PostgresQueryResult> in
                guard !connection.isClosed else { return connection.eventLoop.makeFailedFuture(ClosedBeforeUse()) }
                return connection.query(query, logger: noLog)
              }.get()
            } catch  where isConnectionClosedError(error) {
              try? await connection.close()  // given back only once the pool knows
              throw error
            }
          }
        default:  // .timeout
          let (result, _) = await within(2) { try await drain(client.query(query)) }
          guard let result else { throw Hung() }
          try result.get()
        }
        return
      } catch  where isConnectionClosedError(error) && attempt < 5 {
        attempt += 1
        retries.withLock { $0 += 1 }
        try await Task.sleep(for: .milliseconds(5))
      }
    }
  }
}

/// Runs `body` (a query on `connection`) in an unstructured task and returns its result,
/// or throws ClosedWhileWaiting once the connection's closeFuture has completed: a query
/// written after NIO removed the channel's handlers is never answered, and closeFuture
/// completes in the very event-loop tick that removes them.
func raceAgainstClose(
  _ connection: PostgresConnection, _ body: @escaping @Sendable () async throws -> Void
) async throws {
  let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, any Error>, Never>) in
    let once = Once(continuation)
    Task {
      do { once.resume(.success(try await body())) } catch { once.resume(.failure(error)) }
    }
    connection.closeFuture.whenComplete { _ in
      // Give a reply that was already on its way (completed before the close) a moment to win.
      connection.eventLoop.scheduleTask(in: .milliseconds(50)) { once.resume(.failure(ClosedWhileWaiting())) }
    }
  }
  try result.get()
}

// MARK: - One iteration

enum Outcome: Hashable {
  case ok
  case error(String)
  case hung(ignoredCancel: Bool)
}

func describe(_ error: any Error) -> String {
  if let e = error as? PSQLError {
    var s = "PSQLError(\(e.code)"
    if let state = e.serverInfo?[.sqlState] { s += ", sqlState \(state)" }
    if let u = e.underlying as? PSQLError {
      s += ", underlying PSQLError(\(u.code)"
      if let state = u.serverInfo?[.sqlState] { s += ", sqlState \(state)" }
      s += ")"
    } else if let u = e.underlying {
      s += ", underlying \(type(of: u)): \(u)"
    }
    return s + ")"
  }
  return "\(type(of: error)): \(error)"
}

func iteration(_ index: Int, _ o: Options) async -> (Outcome, String) {
  let client = PostgresClient(configuration: configuration(o.url))
  let run = Task { await client.run() }
  let channel = "repro_\(getpid())_\(index)"
  let subscriptions = Subscriptions()
  var listeners: [Task<Void, Never>] = []
  let leases = Locked<[LeaseInfo]>([])
  let retries = Locked<Int>(0)
  var detail = ""
  var outcome: Outcome

  func cleanup(waitForRun: Bool) async {
    for l in listeners { l.cancel() }
    run.cancel()
    if waitForRun { _ = await within(10) { await run.value } }
  }

  do {
    // As PostgresStore.init: the first connection (index 0 in the pool) creates the table.
    try await drain(client.query("CREATE TABLE IF NOT EXISTS repro_kv (k text PRIMARY KEY, v text)"))
    for _ in 0..<o.listeners {
      listeners.append(
        Task {
          await listenLoop(
            client, channel: channel, subscriptions: subscriptions, waitForClose: o.guardMode == .listenerWait)
        })
    }
    let deadline = ContinuousClock.now + .seconds(10)
    while subscriptions.count < o.listeners {
      guard ContinuousClock.now < deadline else { throw Hung() }
      try await Task.sleep(for: .milliseconds(1))
    }
    // Extra idle pooled connections, opened by concurrent queries and then released.
    if o.idle > 0 {
      try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<o.idle { group.addTask { try await drain(client.query("SELECT pg_sleep(0.05)")) } }
        try await group.waitForAll()
      }
    }
    // An earlier write (setValue before the cut).
    try await drain(client.query(upsertQuery("k", "old", channel: channel)))

    // Cut the sessions.
    let listen = "LISTEN \"\(channel)\";"
    var killed = 0
    switch o.kill {
    case .listeners:
      for try await n in try await client.query(
        "SELECT count(pg_terminate_backend(pid))::int FROM pg_stat_activity WHERE query = \(listen) AND pid <> pg_backend_pid()"
      ).decode(Int.self) { killed = n }
    case .others:
      for try await n in try await client.query(
        "SELECT count(pg_terminate_backend(pid))::int FROM pg_stat_activity WHERE backend_type = 'client backend' AND datname = current_database() AND pid <> pg_backend_pid()"
      ).decode(Int.self) { killed = n }
    case .none: break
    }
    if o.delayMs > 0 { try await Task.sleep(for: .milliseconds(o.delayMs)) }

    // The write under test.
    let query = upsertQuery("k", "new", channel: channel)
    let mode = o.guardMode
    let (result, task) = await within(o.watchdog) {
      try await guardedWrite(client, query, mode: mode, leases: leases, retries: retries)
    }
    switch result {
    case .success: outcome = .ok
    case .failure(let error): outcome = .error(describe(error))
    case .none:
      task.cancel()
      // Does cancelling the hung task end it?
      let (afterCancel, _) = await within(2) { await task.value }
      outcome = .hung(ignoredCancel: afterCancel == nil)
    }
    let r = retries.withLock { $0 }
    detail =
      "killed=\(killed) listenerConns=\(subscriptions.ids) leases=\(leases.withLock { $0.map { "#\($0.id)\($0.closedAtLease ? "(closed)" : "")" } })"
      + (r > 0 ? " retries=\(r)" : "")
  } catch {
    outcome = .error("setup: " + describe(error))
  }
  if case .hung = outcome {
    await cleanup(waitForRun: false)
  } else {
    await cleanup(waitForRun: true)
  }
  return (outcome, detail)
}

// MARK: - Deterministic demonstration

/// A query written to a PostgresConnection after its channel finished closing (closeFuture
/// completed: NIO has removed the handlers) is never answered, whoever closed it.
func demo(_ o: Options) async {
  let watchdog = 5.0
  func report(_ label: String, _ result: Result<Void, any Error>?) {
    switch result {
    case .none: print("\(label): HUNG (no answer after \(watchdog)s)")
    case .success: print("\(label): ok")
    case .failure(let e): print("\(label): error \(describe(e))")
    }
  }
  let c = configuration(o.url)

  // 1. A pooled connection killed by the server, used after its closeFuture completed.
  let client = PostgresClient(configuration: c)
  let run = Task { await client.run() }
  do {
    try await client.withConnection { connection in
      var pid = 0
      for try await p in try await connection.query("SELECT pg_backend_pid()", logger: noLog).decode(Int.self) {
        pid = p
      }
      // Kill it from another connection of the same pool.
      try await drain(client.query("SELECT pg_terminate_backend(\(pid)::int)"))
      try await connection.closeFuture.get()
      print(
        "leased connection #\(connection.id) (pid \(pid)) killed; closeFuture completed; isClosed=\(connection.isClosed)"
      )
      let (result, _) = await within(watchdog) { try await drain(connection.query("SELECT 1", logger: noLog)) }
      report("  connection.query on it", result)
    }
  } catch {
    print("demo 1 failed: \(describe(error))")
  }
  run.cancel()

  // 2. The same with a connection the client closed itself.
  let client2 = PostgresClient(configuration: c)
  let run2 = Task { await client2.run() }
  do {
    try await client2.withConnection { connection in
      try await drain(connection.query("SELECT 1", logger: noLog))
      try await connection.close()
      try await connection.closeFuture.get()
      print("leased connection #\(connection.id) closed by the client; closeFuture completed")
      let (result, _) = await within(watchdog) { try await drain(connection.query("SELECT 1", logger: noLog)) }
      report("  connection.query on it", result)
    }
  } catch {
    print("demo 2 failed: \(describe(error))")
  }
  run2.cancel()
}

// MARK: - Main

if options.demo {
  await demo(options)
  exit(0)
}

print(
  "postgres-nio 1.33.2 repro: iterations=\(options.iterations) listeners=\(options.listeners) kill=\(options.kill.rawValue) "
    + "delay-ms=\(options.delayMs) idle=\(options.idle) guard=\(options.guardMode.rawValue) watchdog=\(options.watchdog)s"
)
var counts: [Outcome: Int] = [:]
var totalRetries = 0
let started = ContinuousClock.now
for i in 1...options.iterations {
  let (outcome, detail) = await iteration(i, options)
  counts[outcome, default: 0] += 1
  if let r = detail.split(separator: " ").first(where: { $0.hasPrefix("retries=") }) {
    totalRetries += Int(r.dropFirst(8)) ?? 0
  }
  switch outcome {
  case .ok:
    if options.verbose { print("#\(i) ok \(detail)") }
  case .error(let e): print("#\(i) ERROR \(e) \(detail)")
  case .hung(let ignored):
    print(
      "#\(i) HUNG: no answer after \(options.watchdog)s\(ignored ? ", and cancelling the task did not end it" : ", ended after cancel") \(detail)"
    )
  }
}
let ok = counts[.ok] ?? 0
let hung = counts.filter { if case .hung = $0.key { return true } else { return false } }.values.reduce(0, +)
let errors = counts.compactMap { key, n -> (String, Int)? in
  if case .error(let e) = key { return (e, n) } else { return nil }
}
print("---")
print(
  "iterations=\(options.iterations) ok=\(ok) errors=\(errors.map(\.1).reduce(0, +)) hung=\(hung) retries=\(totalRetries) (\(ContinuousClock.now - started))"
)
for (e, n) in errors.sorted(by: { $0.1 > $1.1 }) { print("  error x\(n): \(e)") }
for (k, n) in counts {
  if case .hung(let ignored) = k { print("  hung x\(n): cancellation \(ignored ? "ignored" : "honoured")") }
}
exit(hung > 0 ? 2 : 0)
