import Foundation

// The shapes of the conformance scenarios: each one re-expresses, in Swift, one test of the
// public http-tests/cache-tests suite (https://github.com/http-tests/cache-tests) under the
// same test id, so that a result here maps onto a row of that suite's report.

/// How a scenario counts (the suite's `kind`): only `required` ones make the figure; `optimal`
/// and `check` ones run because required ones depend on them.
enum ConformanceKind: Sendable {
  case required, optimal, check
}

/// What a request's response must have been.
enum ConformanceExpectation: Sendable {
  /// Served by the cache: the server did not see this request.
  case cached
  /// Sent to the server as it is.
  case notCached
  /// Sent to the server with `If-None-Match`.
  case etagValidated
  /// Sent to the server with `If-Modified-Since`.
  case lmValidated
}

/// A header value as a scenario writes it: text, or a date that many seconds from the
/// server's `now` when the response is made.
enum ConformanceValue: Sendable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
  /// A literal value the server also records (and the client checks it came through).
  case text(String)
  /// A literal value the server does not record (malformed values the cache may rewrite).
  case unrecorded(String)
  /// An HTTP date `seconds` from now.
  case delta(Int)

  init(stringLiteral value: String) { self = .text(value) }
  init(integerLiteral value: Int) { self = .delta(value) }

  var isRecorded: Bool {
    if case .unrecorded = self { return false }
    return true
  }
}

/// A check on one response header.
enum ConformanceHeaderCheck: Sendable {
  /// The field is present.
  case present(String)
  /// The field has this value (dates relative to the response's own `Server-Now`).
  case equals(String, ConformanceValue)
  /// The field has the same value as another field of the response.
  case sameAs(String, String)
  /// The field is an integer greater than this.
  case greaterThan(String, Int)
}

/// One request of a scenario and the response the server gives it.
struct ConformanceStep: Sendable {
  var method = "GET"
  /// A path component after the scenario's own path.
  var filename: String?
  /// A query string without `?`.
  var query: String?
  var requestHeaders: [(String, ConformanceValue)] = []
  /// A request body (for unsafe methods).
  var requestBody: String?
  /// Whether `If-Modified-Since` deltas count from the previous response's `Server-Now`.
  var magicIMS = false
  /// The status the server answers (200 by default).
  var status: Int?
  var responseHeaders: [(String, ConformanceValue)] = []
  /// The body the server answers; the scenario's identifier by default.
  var responseBody: String?
  /// Seconds the server lets pass between making its response and sending it.
  var responsePause = 0
  /// Whether `Location`/`Content-Location` values are relative to the request's path.
  var magicLocations = false
  /// The date fields formatted in the obsolete RFC 850 form.
  var rfc850Dates: [String] = []
  /// A setup request: a failing check means the scenario could not be run.
  var setup = false
  /// Whether 3 seconds pass after this request.
  var pause = false
  var expect: ConformanceExpectation?
  /// Whether the server drops the connection instead of answering.
  var disconnect = false
  var expectedStatus: Int?
  /// Whether any status will do, or no response at all (the suite's `expected_status: null`).
  var anyStatus = false
  var expectedMethod: String?
  /// Request fields the server must have received: a `nil` value only checks presence.
  var expectedRequestHeaders: [(String, String?)] = []
  var expectedResponseHeaders: [ConformanceHeaderCheck] = []
  /// Response fields that must be absent, or (with a value) must not contain that value.
  var missingResponseHeaders: [(String, String?)] = []
  /// The body the response must have; `.some(nil)` checks none.
  var expectedBody: String??
  /// Whether to check the body at all.
  var checksBody = true
}

/// One test of the suite, re-expressed.
struct ConformanceScenario: Sendable {
  var id: String
  var kind: ConformanceKind = .required
  var dependsOn: [String] = []
  var steps: [ConformanceStep]

  init(_ id: String, _ kind: ConformanceKind, dependsOn: [String] = [], _ steps: [ConformanceStep]) {
    self.id = id
    self.kind = kind
    self.dependsOn = dependsOn
    self.steps = steps
  }

  /// A required scenario.
  init(_ id: String, dependsOn: [String] = [], _ steps: [ConformanceStep]) {
    self.init(id, .required, dependsOn: dependsOn, steps)
  }
}

// MARK: - Building steps

extension ConformanceStep {
  /// A setup request answered with `headers` and followed by a 3-second pause: the usual
  /// first step.
  static func stored(
    _ headers: [(String, ConformanceValue)], status: Int? = nil, body: String? = nil, pause: Bool = true,
    requestHeaders: [(String, ConformanceValue)] = []
  ) -> ConformanceStep {
    var step = ConformanceStep()
    step.responseHeaders = headers
    step.status = status
    step.responseBody = body
    step.setup = true
    step.pause = pause
    step.requestHeaders = requestHeaders
    return step
  }

  /// A request whose response must be `expectation`.
  static func expecting(
    _ expectation: ConformanceExpectation, requestHeaders: [(String, ConformanceValue)] = [],
    headers: [(String, ConformanceValue)] = [], status: Int? = nil
  ) -> ConformanceStep {
    var step = ConformanceStep()
    step.expect = expectation
    step.requestHeaders = requestHeaders
    step.responseHeaders = headers
    step.status = status
    return step
  }

  /// This step with changes.
  func with(_ change: (inout ConformanceStep) -> Void) -> ConformanceStep {
    var copy = self
    change(&copy)
    return copy
  }

  /// The suite's `fresh` template: fresh for a long time, a setup request, then 3 seconds.
  static var fresh: ConformanceStep {
    ConformanceStep(
      responseHeaders: [("Cache-Control", "max-age=100000"), ("Date", 0)], setup: true, pause: true)
  }

  /// The suite's `stale` template: already stale, with a validator; a setup request, then 3
  /// seconds.
  static var stale: ConformanceStep {
    ConformanceStep(
      responseHeaders: [("Expires", -5000), ("Last-Modified", -100_000), ("Date", 0)], setup: true, pause: true)
  }

  /// The suite's `becomeStale` template: fresh for 2 seconds, then 3 seconds pass.
  static var becomeStale: ConformanceStep {
    ConformanceStep(
      responseHeaders: [("Cache-Control", "max-age=2"), ("Date", 0), ("Template-A", "1")], setup: true, pause: true)
  }
}
