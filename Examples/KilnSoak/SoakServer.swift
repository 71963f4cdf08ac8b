import Foundation
import KilnTesting
import Synchronization
import _KilnTestServer

/// How often the server misbehaves: calm most of the time, a storm now and then.
struct FaultRates: Sendable {
  /// `503 Service Unavailable` (sometimes with `Retry-After: 1`).
  var unavailable: Double
  /// `500 Internal Server Error`.
  var internalError: Double
  /// The connection is closed instead of answered.
  var dropped: Double
  /// The body trickles in small pieces.
  var slowBody: Double
  /// The connection is closed halfway through a body whose length the head announced.
  var droppedMidBody: Double
  /// No answer for longer than the handler's timeout.
  var stalled: Double

  static let calm = FaultRates(
    unavailable: 0.02, internalError: 0.01, dropped: 0.01, slowBody: 0.02, droppedMidBody: 0.005, stalled: 0.001)
  static let storm = FaultRates(
    unavailable: 0.15, internalError: 0.05, dropped: 0.05, slowBody: 0.05, droppedMidBody: 0.02, stalled: 0.01)
}

/// The soak's JSON API on a loopback server, injecting faults:
///
/// - `GET /item/<id>` — a ``SoakValue`` whose sequence number is the item's version, which
///   goes up every two seconds; `Cache-Control: max-age=1` and an `ETag`, answering `304` to
///   a matching `If-None-Match`;
/// - `GET /articles?list=<l>&page=<n>` — pages 1 to ``pageCount`` of ``pageSize`` articles
///   whose sequence numbers are consecutive across pages.
final class SoakAPI: Sendable {
  static let pageCount = 40
  static let pageSize = 4
  /// How long a stalled answer waits: longer than the handler's timeout.
  static let stall: Duration = .seconds(8)

  private let started = ContinuousClock.now
  private let rates = Mutex(FaultRates.calm)
  private let issued = Mutex<[Int: Int]>([:])
  let answered = Atomic<Int>(0)
  /// Starts the server.
  func start() async throws -> TestServer {
    // The server's own record of requests would grow for the whole soak: it is off.
    try await TestServer.start(recordsRequests: false) { [self] request in
      await self.answer(request)
    }
  }

  func setRates(_ rates: FaultRates) {
    self.rates.withLock { $0 = rates }
  }

  /// The newest version of item `id` the server ever sent.
  func newestIssuedVersion(of id: Int) -> Int? {
    issued.withLock { $0[id] }
  }

  private func currentVersion(of id: Int) -> Int {
    let elapsed = started.duration(to: .now).components.seconds
    return Int(elapsed / 2) + id % 7
  }

  private func answer(_ request: TestRequest) async -> TestResponse {
    answered.add(1, ordering: .relaxed)
    let response: TestResponse
    if request.path.hasPrefix("/item/"), let id = Int(request.path.dropFirst("/item/".count)) {
      let version = currentVersion(of: id)
      issued.withLock { $0[id] = max($0[id] ?? version, version) }
      let etag = "\"v\(version)\""
      let headers = [("Cache-Control", "max-age=1"), ("ETag", etag)]
      if request.headers["if-none-match"] == etag {
        response = .status(304, headers: headers)
      } else {
        response = .json(SoakValue(key: "item-\(id)", sequence: version), headers: headers)
      }
    } else if request.path == "/articles", let list = Int(request.query["list"] ?? ""),
      let page = Int(request.query["page"] ?? ""), (1...Self.pageCount).contains(page)
    {
      let first = (page - 1) * Self.pageSize
      response = .json((first..<first + Self.pageSize).map { SoakValue(key: "list-\(list)", sequence: $0) })
    } else {
      return .status(404)
    }
    return fault(response)
  }

  private func fault(_ response: TestResponse) -> TestResponse {
    let rates = self.rates.withLock { $0 }
    var roll = Double.random(in: 0..<1)
    func hits(_ rate: Double) -> Bool {
      defer { roll -= rate }
      return roll < rate
    }
    if hits(rates.unavailable) {
      return .status(503, headers: Bool.random() && Int.random(in: 0..<10) == 0 ? [("Retry-After", "1")] : [])
    }
    if hits(rates.internalError) { return .status(500) }
    if hits(rates.dropped) { return .closeConnection }
    if hits(rates.slowBody) { return response.trickled(chunkSize: 128, every: .milliseconds(15)) }
    if hits(rates.droppedMidBody), response.body.count > 8 {
      return response.droppingConnection(afterBodyBytes: response.body.count / 2)
    }
    if hits(rates.stalled) { return response.delayed(by: Self.stall) }
    return response
  }
}
