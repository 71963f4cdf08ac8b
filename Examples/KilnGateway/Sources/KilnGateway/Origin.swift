import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Synchronization

/// The origin service: `GET /items/{id}` answers a JSON document of about 1 KB after `work`
/// (the database query a real service would make), cacheable by shared caches for `maxAge`
/// seconds (`?work_ms=N` takes N ms instead). It counts the requests it receives per item, which `/stats` reports.
final class Origin: Sendable {
  let port: Int
  let work: Duration
  let maxAge: Int

  /// Requests received per item since the start (or the last `POST /stats/reset`).
  private let requests = Mutex<[String: Int]>([:])

  init(options: Options) throws(UsageError) {
    port = try options.int("port", default: 8080)
    work = .milliseconds(try options.int("work-ms", default: 20))
    maxAge = try options.int("max-age", default: 60)
  }

  func run() async throws {
    let router = Router()
    router.get("health") { _, _ in "ok" }
    router.get("items/:id") { [self] request, context in
      let id = try context.parameters.require("id")
      // `?work_ms=` lengthens one response (the run script's graceful-shutdown check).
      let work = request.uri.queryParameters.get("work_ms", as: Int.self).map { Duration.milliseconds($0) } ?? self.work
      let count = requests.withLock { requests in
        requests[id, default: 0] += 1
        return requests[id]!
      }
      try await Task.sleep(for: work)
      var headers = HTTPFields()
      headers[.contentType] = "application/json"
      headers[.cacheControl] = "public, max-age=\(maxAge)"
      headers[.eTag] = "\"\(id)-\(count)\""
      return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: document(id))))
    }
    router.get("stats") { [self] _, _ in
      let counts = requests.withLock { $0 }
      let total = counts.values.reduce(0, +)
      var headers = HTTPFields()
      headers[.contentType] = "application/json"
      let body = #"{"requests":\#(total),"keys":\#(counts.count),"max_per_key":\#(counts.values.max() ?? 0)}"#
      return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }
    router.post("stats/reset") { [self] _, _ in
      requests.withLock { $0.removeAll() }
      return HTTPResponse.Status.noContent
    }
    var logger = Logger(label: "origin")
    logger.logLevel = .warning
    let (workTime, lifetime) = (self.work, self.maxAge)
    let app = Application(
      router: router, configuration: .init(address: .hostname("127.0.0.1", port: port), serverName: "kiln-origin"),
      onServerRunning: { channel in
        say("origin listening on 127.0.0.1:\(channel.localAddress?.port ?? 0) (work \(workTime), max-age \(lifetime))")
      },
      logger: logger)
    try await app.runService()
    say("origin stopped")
  }

  /// About 1 KB of JSON for item `id`.
  private func document(_ id: String) -> String {
    let tags = (0..<24).map { #""tag-\#(id)-\#($0)""# }.joined(separator: ",")
    return #"{"id":"\#(id)","name":"Item \#(id)","price":\#(id.utf8.count * 100 + 99),"tags":[\#(tags)]}"#
  }
}
