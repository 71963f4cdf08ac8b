import Foundation
import KilnNetwork
import KilnStorage
import KilnTesting
import Synchronization
import _KilnTestServer

/// Runs conformance scenarios: a loopback server answers each request as the scenario scripts
/// it, and the client is a `NetworkHandler` over a real transport behind a private `HTTPCache`
/// on a `MemoryCache`. The server's dates and the cache's clock are one `ManualDate`, and a
/// pause moves it by 3 seconds: nothing sleeps.
final class ConformanceRunner: Sendable {
  /// What the server saw and answered for one request.
  struct ServerRecord: Sendable {
    var requestNumber: Int
    var method: String
    var headers: [String: String]
    /// The recorded response fields, each name's values joined with ", ".
    var responseHeaders: [(String, String)]
  }

  private struct Script: Sendable {
    var steps: [ConformanceStep]
    var records: [ServerRecord] = []
    /// The header values each step was answered with, by step.
    var answered: [Int: [(String, String)]] = [:]
  }

  let now = ManualDate(Date(timeIntervalSince1970: 1_767_225_600))
  private let scripts = Mutex<[String: Script]>([:])

  /// The server's answer to `request`.
  func answer(_ request: TestRequest) -> TestResponse {
    let segments = request.path.split(separator: "/").map(String.init)
    guard segments.count >= 2, segments[0] == "test" else { return .status(404) }
    let id = segments[1]
    return scripts.withLock { scripts -> TestResponse in
      guard var script = scripts[id] else { return .status(409) }
      let serverNumber = script.records.count + 1
      let number = request.headers["req-num"].flatMap { Int($0) } ?? serverNumber
      guard (1...script.steps.count).contains(number) else { return .status(409) }
      let step = script.steps[number - 1]
      let now = self.now.now
      var status = step.status ?? 200
      if step.expect == .etagValidated || step.expect == .lmValidated {
        // The previous step's fields as answered, or as scripted when the server never answered
        // it (a date that was never resolved matches nothing).
        let previous =
          script.answered[number - 2]
          ?? (number >= 2 ? script.steps[number - 2].responseHeaders : []).compactMap { name, value in
            switch value {
            case .text(let text), .unrecorded(let text): (name, text)
            case .delta: nil
            }
          }
        func previousValue(_ name: String) -> String? {
          previous.first { $0.0.caseInsensitiveCompare(name) == .orderedSame }?.1
        }
        status = 999
        if let modified = previousValue("Last-Modified"), request.headers["if-modified-since"] == modified {
          status = 304
        }
        if let tag = previousValue("ETag"), request.headers["if-none-match"] == tag { status = 304 }
      }
      var headers: [(String, String)] = [
        ("Server-Base-Url", request.uri), ("Server-Request-Count", String(serverNumber)),
        ("Client-Request-Count", String(number)), ("Server-Now", String(Int(now.timeIntervalSince1970))),
      ]
      var recorded: [(String, String)] = []
      var answered: [(String, String)] = []
      for (name, value) in step.responseHeaders {
        let text = Self.resolve(name, value, now: now, step: step, baseURL: request.uri)
        headers.append((name, text))
        answered.append((name, text))
        if value.isRecorded {
          let all = headers.filter { $0.0.caseInsensitiveCompare(name) == .orderedSame }.map(\.1)
          recorded.removeAll { $0.0.caseInsensitiveCompare(name) == .orderedSame }
          recorded.append((name, all.joined(separator: ", ")))
        }
      }
      if !headers.contains(where: { $0.0.caseInsensitiveCompare("Date") == .orderedSame }) {
        headers.append(("Date", HTTPDate.format(now)))
      }
      if !headers.contains(where: { $0.0.caseInsensitiveCompare("Content-Type") == .orderedSame }) {
        headers.append(("Content-Type", "text/plain"))
      }
      script.records.append(
        ServerRecord(
          requestNumber: number, method: request.method, headers: request.headers, responseHeaders: recorded))
      script.answered[number - 1] = answered
      scripts[id] = script
      let body = [204, 304].contains(status) ? [] : Array((step.responseBody ?? id).utf8)
      var response = TestResponse(status: status, headers: headers, body: body)
      response.dropsConnection = step.disconnect
      // The response, dated now, reaches the client `responsePause` seconds later.
      if step.responsePause > 0 { self.now.advance(by: .seconds(step.responsePause)) }
      return response
    }
  }

  static func resolve(
    _ name: String, _ value: ConformanceValue, now: Date, step: ConformanceStep, baseURL: String
  ) -> String {
    switch value {
    case .delta(let seconds):
      let date = now.addingTimeInterval(TimeInterval(seconds))
      return step.rfc850Dates.contains { $0.caseInsensitiveCompare(name) == .orderedSame }
        ? rfc850(date) : HTTPDate.format(date)
    case .text(let text), .unrecorded(let text):
      let lower = name.lowercased()
      guard step.magicLocations, lower == "location" || lower == "content-location" else { return text }
      return text.isEmpty ? baseURL : "\(baseURL)/\(text)"
    }
  }

  static func rfc850(_ date: Date) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEEE, dd-MMM-yy HH:mm:ss 'GMT'"
    return formatter.string(from: date)
  }

  /// The outcome of one scenario: `nil` when it passed, else why not.
  func run(
    _ scenario: ConformanceScenario, server: TestServer, base: any Transport, policy: HTTPCachePolicy = .private
  ) async -> String? {
    let id = UUID().uuidString.lowercased()
    scripts.withLock { $0[id] = Script(steps: scenario.steps) }
    defer { _ = scripts.withLock { $0.removeValue(forKey: id) } }
    let cache = HTTPCache(store: MemoryCache<String, Data>(entryLifetime: nil), policy: policy, now: now.provider)
    let handler = NetworkHandler(
      transport: cachingTransport(base, in: cache), retryPolicy: .never, validation: .all, now: now.provider)
    var responses: [HTTPResponse] = []
    do {
      for (index, step) in scenario.steps.enumerated() {
        let number = index + 1
        var headers: [String: String] = [:]
        for (name, value) in step.requestHeaders {
          let text: String
          if case .delta(let seconds) = value {
            let base =
              step.magicIMS
              ? responses.last?.headers["Server-Now"].flatMap(Double.init).map(Date.init(timeIntervalSince1970:))
                ?? now.now : now.now
            let date = base.addingTimeInterval(TimeInterval(seconds))
            text =
              step.rfc850Dates.contains { $0.caseInsensitiveCompare(name) == .orderedSame }
              ? Self.rfc850(date) : HTTPDate.format(date)
          } else {
            text = Self.resolve(name, value, now: now.now, step: step, baseURL: "")
          }
          headers[name] = headers[name].map { "\($0), \(text)" } ?? text
        }
        headers["Req-Num"] = String(number)
        let target = ConformanceTarget(
          baseURL: server.baseURL, path: "test/\(id)" + (step.filename.map { "/\($0)" } ?? ""),
          method: HTTPMethod(rawValue: step.method), query: step.query, headers: headers,
          body: step.requestBody.map { Data($0.utf8) })
        let response: HTTPResponse
        do {
          response = try await handler.request(target)
        } catch {
          // The server dropped the connection and the scenario does not expect a stored
          // response: no response is an answer (a proxy would send a 502 or 504).
          guard step.disconnect, step.anyStatus, step.expect != .cached else {
            return "\(label(step)) request \(number) failed: \(error)"
          }
          responses.append(HTTPResponse(status: 0))
          if step.pause { now.advance(by: .seconds(3)) }
          continue
        }
        await cache.waitForRevalidations()
        responses.append(response)
        if let failure = check(response, of: step, number: number, id: id) {
          return "\(label(step)) \(failure)"
        }
        if step.pause { now.advance(by: .seconds(3)) }
      }
    }
    let records = scripts.withLock { $0[id]?.records ?? [] }
    return checkServer(records, steps: scenario.steps, responses: responses)
  }

  private func label(_ step: ConformanceStep) -> String {
    step.setup ? "setup:" : "assertion:"
  }

  private func check(_ response: HTTPResponse, of step: ConformanceStep, number: Int, id: String) -> String? {
    let served = response.headers["Server-Request-Count"].flatMap { Int($0) }
    switch step.expect {
    case .cached:
      if !(response.status == 304 && served == nil), !((served ?? .max) < number) {
        return "response \(number) does not come from the cache"
      }
    case .notCached:
      if served != number { return "response \(number) comes from the cache" }
    default: break
    }
    let expectedStatus = step.expectedStatus ?? step.status ?? 200
    if !step.anyStatus, response.status != expectedStatus {
      if response.status == 999 { return "request \(number) should have been conditional, but it was not" }
      return "response \(number) status is \(response.status), not \(expectedStatus)"
    }
    for check in step.expectedResponseHeaders {
      switch check {
      case .present(let name):
        if !response.headers.contains(name) { return "response \(number) has no \(name)" }
      case .equals(let name, let value):
        let serverNow = response.headers["Server-Now"].flatMap(Double.init).map(Date.init(timeIntervalSince1970:))
        let expected = Self.resolve(name, value, now: serverNow ?? now.now, step: step, baseURL: "")
        if response.headers[name] != expected {
          return "response \(number) \(name) is \(response.headers[name] ?? "absent"), not \(expected)"
        }
      case .sameAs(let name, let other):
        if response.headers[name] == nil || response.headers[name] != response.headers[other] {
          return "response \(number) \(name) does not match \(other)"
        }
      case .greaterThan(let name, let bound):
        if !((response.headers[name].flatMap { Int($0) } ?? .min) > bound) {
          return "response \(number) \(name) is \(response.headers[name] ?? "absent"), not above \(bound)"
        }
      }
    }
    for (name, value) in step.missingResponseHeaders {
      if let value {
        if response.headers[name]?.contains(value) == true {
          return "response \(number) \(name) still has \(value)"
        }
      } else if response.headers.contains(name) {
        return "response \(number) has unexpected \(name): \(response.headers[name] ?? "")"
      }
    }
    guard step.checksBody else { return nil }
    let body = String(decoding: response.body, as: UTF8.self)
    let expectedBody: String?
    if let explicit = step.expectedBody {
      expectedBody = explicit
    } else if let scripted = step.responseBody {
      expectedBody = scripted
    } else if ![204, 304].contains(response.status), step.method != "HEAD" {
      expectedBody = id
    } else {
      expectedBody = nil
    }
    if let expectedBody, body != expectedBody {
      return "response \(number) body is \"\(body.prefix(60))\", not \"\(expectedBody)\""
    }
    return nil
  }

  private func checkServer(_ records: [ServerRecord], steps: [ConformanceStep], responses: [HTTPResponse]) -> String? {
    var index = 0
    for (offset, step) in steps.enumerated() {
      let number = offset + 1
      if step.expect == .cached { continue }
      let record = index < records.count ? records[index] : nil
      index += 1
      let tag = step.setup ? "setup:" : "assertion:"
      if step.expect == .notCached, record?.requestNumber != number {
        return "\(tag) response \(number) comes from the cache (server saw \(record?.requestNumber ?? 0))"
      }
      let validators =
        step.expect == .etagValidated ? ["if-none-match"] : step.expect == .lmValidated ? ["if-modified-since"] : []
      for name in validators {
        guard let record else { return "\(tag) request \(number) was not sent to the server" }
        if record.headers[name] == nil { return "\(tag) request \(number) has no \(name)" }
      }
      for (name, value) in step.expectedRequestHeaders {
        let received = record?.headers[name.lowercased()]
        if let value {
          if received != value { return "\(tag) request \(number) \(name) is \(received ?? "absent"), not \(value)" }
        } else if received == nil {
          return "\(tag) request \(number) has no \(name)"
        }
      }
      if let record, !step.disconnect {
        let response = responses[offset]
        for (name, value) in record.responseHeaders where name.lowercased() != "date" {
          if response.headers[name] != value {
            return "assertion: response \(number) \(name) is \(response.headers[name] ?? "absent"), not \(value)"
          }
        }
        if let method = step.expectedMethod, record.method != method {
          return "\(tag) request \(number) had method \(record.method), not \(method)"
        }
      }
    }
    return nil
  }
}

/// The target a conformance step sends.
struct ConformanceTarget: TargetGroup {
  var baseURL: URL
  var path: String
  var method: HTTPMethod
  var query: String?
  var headers: [String: String]?
  var body: Data?

  var task: NetworkTask {
    let parameters = query.map { text in
      QueryParameters(
        text.split(separator: "&").map { pair in
          let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
          return QueryParameters.Item(name: parts[0], value: parts.count > 1 ? parts[1] : nil)
        })
    }
    switch (parameters, body) {
    case (let parameters?, let body?): return .parametersAndBody(parameters, .data(body, contentType: "text/plain"))
    case (let parameters?, nil): return .parameters(parameters)
    case (nil, let body?): return .body(.data(body, contentType: "text/plain"))
    case (nil, nil): return .plain
    }
  }
}
