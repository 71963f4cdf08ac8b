// 9. Offline writes: a second process (this demo, relaunched) renames notes while the origin
// is down; each change shows at once and is durable when `mutate` returns. The process is
// killed with its changes pending. This process then opens the same outbox (the restart),
// shows the changes as pending, and sends them once the origin is back: each is applied
// exactly once, in order per note, under the idempotency key it got when it was made.

import Foundation
import KilnRepositoryNetwork
import Synchronization
import _KilnTestServer

/// When this process was started as the demo's offline writer, runs it and exits; otherwise
/// returns at once.
func runOutboxWriterIfRequested() async {
  let arguments = CommandLine.arguments
  guard arguments.count == 4, arguments[1] == "--outbox-writer" else { return }
  do {
    try await OutboxDemo.writer(outbox: arguments[2], origin: arguments[3])
  } catch {
    print("writer error \(error)")
    exit(1)
  }
}

/// Step 9 of the demo.
func outboxStep(workspace: URL) async throws {
  step("9. Offline writes: made while the origin is down, the app killed, then sent once after a restart")
  try await OutboxDemo.run(workspace: workspace)
}

enum OutboxDemo {
  /// `PUT /notes/<id>` with the new title.
  struct RenameNote: TargetGroup {
    var baseURL: URL
    var id: Int
    var title: String

    var path: String { "notes/\(id)" }
    var method: HTTPMethod { .put }
    var task: NetworkTask { .body(.json(title)) }
  }

  /// The notes service: applies each `Idempotency-Key` once and answers a repeat with the
  /// stored answer, as the IETF draft asks of a server.
  final class Origin: Sendable {
    struct Applied: Sendable {
      var id: Int
      var title: String
      var key: String
    }

    private let state = Mutex<(answers: [String: TestResponse], applied: [Applied])>(([:], []))

    func handle(_ request: TestRequest) -> TestResponse {
      guard request.method == "PUT", let id = Int(request.path.dropFirst("/notes/".count)),
        let key = request.headers["idempotency-key"],
        let title = try? JSONDecoder().decode(String.self, from: request.body)
      else { return .status(400) }
      return state.withLock { state in
        if let answer = state.answers[key] { return answer }
        state.applied.append(Applied(id: id, title: title, key: key))
        let answer = TestResponse.json(title)
        state.answers[key] = answer
        return answer
      }
    }

    var applied: [Applied] { state.withLock { $0.applied } }
  }

  static let changes = [(1, "Groceries"), (2, "Trip to Lyon"), (1, "Groceries for Sunday"), (3, "Ideas")]

  /// The notes repository and its writes through an outbox on the file at `path`.
  static func open(outbox path: String, origin: URL) async throws -> (
    Repository<Int, String>, Outbox, Writes<Int, String, String>, SQLiteOutboxStore
  ) {
    let store = try SQLiteOutboxStore(url: URL(fileURLWithPath: path))
    let outbox = try await Outbox.open(store, options: OutboxOptions(probeInterval: .milliseconds(200)))
    let notes = Repository<Int, String>()
    let titles = HTTPMutator<Int, String, String, RenameNote>(
      handler: NetworkHandler(transport: URLSessionTransport(), retryPolicy: .never),
      apply: { title, _ in title },
      target: { title, id in RenameNote(baseURL: origin, id: id, title: title) },
      content: { response in try JSONDecoder().decode(String.self, from: response.body) })
    let writes = try await notes.writes(
      through: titles, outbox: outbox, channel: "note-title", paramCodec: .automatic, changeCodec: .automatic)
    return (notes, outbox, writes, store)
  }

  /// The second process: renames notes with the origin down, then waits to be killed.
  static func writer(outbox path: String, origin: String) async throws {
    let (_, outbox, writes, _) = try await open(outbox: path, origin: URL(string: origin)!)
    for (id, title) in changes {
      let ticket = try await writes.mutate(id, title)
      say("ack \(id) \(ticket.key.headerValue)")
    }
    while !(await outbox.isPaused) { try await Task.sleep(for: .milliseconds(10)) }
    say("paused")
    try await Task.sleep(for: .seconds(3_600))
  }

  /// Writes `line` unbuffered: the parent reads it before it kills this process.
  static func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
  }

  static func run(workspace: URL) async throws {
    let origin = Origin()
    let server = try await TestServer.start { origin.handle($0) }
    let proxy = try await FaultProxy.start(upstreamPort: server.port, conditions: .refuse)
    let base = URL(string: "http://127.0.0.1:\(proxy.port)")!
    let path = workspace.appendingPathComponent("outbox.sqlite").path

    // The app, offline: four renames, each acknowledged once durable, then killed.
    let app = Process()
    app.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    app.arguments = ["--outbox-writer", path, base.absoluteString]
    let output = Pipe()
    app.standardOutput = output
    try app.run()
    var lines: [String] = []
    var buffer = Data()
    while !lines.contains("paused") {
      let chunk = output.fileHandleForReading.availableData
      check(!chunk.isEmpty, "the writer process ended early: \(lines)")
      buffer.append(chunk)
      while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
        lines.append(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
        buffer.removeSubrange(buffer.startIndex...newline)
      }
    }
    let keys = lines.filter { $0.hasPrefix("ack ") }.map { String($0.split(separator: " ")[2]) }
    print("   the app, offline, renamed \(keys.count) notes: each shown at once, durable when mutate returned")
    // One outbox sends a file's entries: a second one, while the app runs, is refused.
    let second = try SQLiteOutboxStore(url: URL(fileURLWithPath: path))
    do {
      _ = try await Outbox.open(second)
      check(false, "a second outbox on the app's file should be refused")
    } catch {
      guard case .storeInUse(let holder) = error else { throw error }
      check(holder == "process \(app.processIdentifier)", "the refusal names the app: \(holder)")
      print("   a second outbox on that file is refused while the app sends it (held by \(holder))")
    }
    await second.close()
    kill(app.processIdentifier, SIGKILL)
    app.waitUntilExit()
    print("   the origin is unreachable, so the app paused sending; then it was killed (SIGKILL)")
    check(origin.applied.isEmpty, "nothing reached the origin while it was down")

    // The restart, still offline: the changes show as pending. Then the network comes back.
    let (notes, outbox, _, store) = try await open(outbox: path, origin: base)
    let note = AnyStoreFlowable.from(cacher: notes, fetcher: AnyFetcher<Int, String> { _ in "?" }, param: 1)
    let shown = await note.publish().withOrigin().first { _ in true }
    try await proxy.set(.normal)
    let (drained, elapsed) = await timed {
      await outbox.resume()  // the app saw the network come back
      await outbox.waitUntilDrained()
      return await outbox.entries.isEmpty
    }
    await outbox.close()
    await store.close()
    print(
      "   restarted, note 1 shows \"\(shown?.state.content ?? "-")\" with \(shown?.pending?.count ?? 0) changes pending;"
        + " back online, all \(origin.applied.count) arrive (\(show(elapsed))):")
    for change in origin.applied {
      print("     PUT /notes/\(change.id) \"\(change.title)\"  Idempotency-Key: \(change.key.prefix(15))…\"")
    }
    check(drained, "the outbox is empty")
    check(origin.applied.count == changes.count, "each change applied once")
    for id in Set(changes.map(\.0)) {
      check(
        origin.applied.filter { $0.id == id }.map(\.title) == changes.filter { $0.0 == id }.map(\.1),
        "note \(id)'s changes applied in the order made")
    }
    check(Set(origin.applied.map(\.key)) == Set(keys), "under the keys they got when they were made")
    check(shown?.state.content == "Groceries for Sunday" && shown?.pending?.count == 2, "the changes show as pending")
    try await proxy.stop()
    try await server.stop()
  }
}
