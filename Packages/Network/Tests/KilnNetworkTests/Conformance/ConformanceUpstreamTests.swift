import Foundation
import Testing

/// One test of http-tests/cache-tests as upstream defines it (`conformanceUpstreamJSON`,
/// written by `Scripts/cache-tests-manifest.mjs`).
struct UpstreamCacheTest: Decodable, Sendable {
  struct Field: Decodable, Sendable {
    var name: String
    var text: String?
    var delta: Int?
    var unrecorded: Bool?
  }

  struct Step: Decodable, Sendable {
    var method: String
    var setup: Bool?
    var pause: Bool?
    var expect: String?
    var status: Int?
    var requestHeaders: [Field]?
    var responseHeaders: [Field]?
    var filename: String?
    var query: String?
    var magicIMS: Bool?
    var interim: Bool?
    var disconnect: Bool?
    var expectedStatus: ExpectedStatus?
    var rfc850Dates: [String]?
    var responseBody: String?
    var responsePause: Int?
    var cacheMode: String?
  }

  /// Upstream's `expected_status`: a code, or `null` for any status (or none, the connection
  /// being dropped).
  enum ExpectedStatus: Decodable, Sendable, Equatable {
    case code(Int)
    case any

    init(from decoder: any Decoder) throws {
      let container = try decoder.singleValueContainer()
      if let code = try? container.decode(Int.self) {
        self = .code(code)
      } else {
        _ = try container.decode(String.self)
        self = .any
      }
    }
  }

  var id: String
  var kind: String
  var dependsOn: [String]?
  var browserOnly: Bool?
  var browserSkip: Bool?
  var cdnOnly: Bool?
  var steps: [Step]

  /// Every upstream test, in upstream's order.
  static let all: [UpstreamCacheTest] = {
    do {
      return try JSONDecoder().decode([UpstreamCacheTest].self, from: Data(conformanceUpstreamJSON.utf8))
    } catch {
      fatalError("ConformanceUpstream.swift does not decode: \(error)")
    }
  }()

  /// Upstream's tests by id.
  static let byID: [String: UpstreamCacheTest] = Dictionary(all.map { ($0.id, $0) }) { first, _ in first }

  /// Whether upstream runs this test against a cache of `selection`'s kind.
  func runs(in selection: ConformanceSelection) -> Bool {
    switch selection {
    case .privateCache: browserSkip != true && cdnOnly != true
    case .sharedCache: browserOnly != true && cdnOnly != true
    case .cdn: browserOnly != true
    }
  }
}

/// The kinds of cache upstream's report has a column for: browsers (private), reverse proxies
/// (shared) and CDNs (shared, with `CDN-Cache-Control`).
enum ConformanceSelection: String, Sendable, CaseIterable {
  case privateCache = "private"
  case sharedCache = "shared"
  case cdn = "CDN"
}

extension ConformanceSuite {
  /// Every re-expressed scenario upstream runs against `selection`'s kind of cache.
  static func scenarios(for selection: ConformanceSelection) -> [ConformanceScenario] {
    var seen = Set<String>()
    return (all + cdn).filter { scenario in
      guard let upstream = UpstreamCacheTest.byID[scenario.id], upstream.runs(in: selection) else { return false }
      return seen.insert(scenario.id).inserted
    }
  }
}

/// Checks the re-expressed scenarios against upstream's definitions, so that a result here is
/// a result of upstream's test.
@Suite("HTTP cache conformance: the scenarios match http-tests/cache-tests' definitions")
struct ConformanceUpstreamTests {
  /// Upstream tests that are not re-expressed here, each with the reason.
  static let notReexpressed: [String: String] = {
    let interim =
      "the origin sends 1xx interim responses before the final one: neither URLSession nor AsyncHTTPClient hands them "
      + "to the client, so a cache on top of either never sees one"
    return [
      "interim-102": interim, "interim-103": interim, "interim-not-cached": interim, "interim-no-header-reuse": interim,
    ]
  }()

  /// Scenarios that differ from upstream's definition on purpose, each with the reason.
  static let deviations: [String: String] = [
    "headers-store-Content-Length":
      "upstream answers `Content-Length: 10` with its 36-byte default body; the loopback server frames a body by "
      + "its real length, so the scenario's body is 10 bytes long"
  ]

  @Test(
    "every scenario has upstream's kind, dependencies and requests (method, setup, pause, expectation, status, fields)")
  func scenariosMatchUpstream() {
    var checked = 0
    for scenario in ConformanceSuite.all + ConformanceSuite.cdn {
      guard let upstream = UpstreamCacheTest.byID[scenario.id] else {
        Issue.record("\(scenario.id) is not an upstream test")
        continue
      }
      checked += 1
      let differences = Self.differences(scenario, upstream)
      if Self.deviations[scenario.id] != nil {
        if differences.isEmpty { Issue.record("\(scenario.id) is listed as a deviation but matches upstream") }
        continue
      }
      for difference in differences {
        Issue.record("\(scenario.id): \(difference)")
      }
    }
    #expect(checked > 300)
  }

  @Test(
    "every upstream test of each selection is re-expressed, but those listed with a reason",
    arguments: ConformanceSelection.allCases)
  func everyUpstreamTestIsReexpressed(selection: ConformanceSelection) {
    let ours = Set((ConformanceSuite.all + ConformanceSuite.cdn).map(\.id))
    for upstream in UpstreamCacheTest.all where upstream.runs(in: selection) && !ours.contains(upstream.id) {
      if Self.notReexpressed[upstream.id] == nil {
        Issue.record(
          "\(upstream.id) (\(upstream.kind)) runs in the \(selection.rawValue) selection and is not re-expressed")
      }
    }
    for id in Self.notReexpressed.keys where ours.contains(id) {
      Issue.record("\(id) is listed as not re-expressed but is: update the list")
    }
  }

  /// How `scenario` differs from `upstream`, one line per difference.
  static func differences(_ scenario: ConformanceScenario, _ upstream: UpstreamCacheTest) -> [String] {
    var differences: [String] = []
    let kind: String =
      switch scenario.kind {
      case .required: "required"
      case .optimal: "optimal"
      case .check: "check"
      }
    if kind != upstream.kind { differences.append("kind \(kind), upstream \(upstream.kind)") }
    if Set(scenario.dependsOn) != Set(upstream.dependsOn ?? []) {
      differences.append("depends on \(scenario.dependsOn), upstream \(upstream.dependsOn ?? [])")
    }
    guard scenario.steps.count == upstream.steps.count else {
      differences.append("\(scenario.steps.count) requests, upstream \(upstream.steps.count)")
      return differences
    }
    for (index, (step, theirs)) in zip(scenario.steps, upstream.steps).enumerated() {
      let at = "request \(index + 1)"
      if step.method != theirs.method { differences.append("\(at): method \(step.method), upstream \(theirs.method)") }
      if step.setup != (theirs.setup ?? false) {
        differences.append("\(at): setup \(step.setup), upstream \(!step.setup)")
      }
      if step.pause != (theirs.pause ?? false) {
        differences.append("\(at): pause \(step.pause), upstream \(!step.pause)")
      }
      let expectation: String? =
        switch step.expect {
        case .cached: "cached"
        case .notCached: "not_cached"
        case .etagValidated: "etag_validated"
        case .lmValidated: "lm_validated"
        case nil: nil
        }
      if expectation != theirs.expect {
        differences.append("\(at): expects \(expectation ?? "nothing"), upstream \(theirs.expect ?? "nothing")")
      }
      if (step.status ?? 200) != (theirs.status ?? 200) {
        differences.append("\(at): status \(step.status ?? 200), upstream \(theirs.status ?? 200)")
      }
      if step.filename != theirs.filename {
        differences.append("\(at): filename \(step.filename ?? "none"), upstream \(theirs.filename ?? "none")")
      }
      if step.query != theirs.query {
        differences.append("\(at): query \(step.query ?? "none"), upstream \(theirs.query ?? "none")")
      }
      if step.disconnect != (theirs.disconnect ?? false) {
        differences.append("\(at): disconnect \(step.disconnect), upstream \(!step.disconnect)")
      }
      let expectedStatus: UpstreamCacheTest.ExpectedStatus? =
        step.anyStatus ? .any : step.expectedStatus.map { .code($0) }
      if expectedStatus != theirs.expectedStatus {
        differences.append(
          "\(at): expected status \(String(describing: expectedStatus)), upstream \(String(describing: theirs.expectedStatus))"
        )
      }
      if Set(step.rfc850Dates.map { $0.lowercased() }) != Set((theirs.rfc850Dates ?? []).map { $0.lowercased() }) {
        differences.append("\(at): RFC 850 dates \(step.rfc850Dates), upstream \(theirs.rfc850Dates ?? [])")
      }
      if step.responseBody != theirs.responseBody {
        differences.append("\(at): body \(step.responseBody ?? "none"), upstream \(theirs.responseBody ?? "none")")
      }
      if step.responsePause != (theirs.responsePause ?? 0) {
        differences.append("\(at): response pause \(step.responsePause), upstream \(theirs.responsePause ?? 0)")
      }
      if theirs.interim == true { differences.append("\(at): upstream sends interim (1xx) responses") }
      if step.magicIMS != (theirs.magicIMS ?? false) {
        differences.append("\(at): magic_ims \(step.magicIMS), upstream \(!step.magicIMS)")
      }
      let mine = step.responseHeaders.map(Self.describe)
      let upstreamFields = (theirs.responseHeaders ?? []).map(Self.describe)
      if mine != upstreamFields { differences.append("\(at): response fields \(mine), upstream \(upstreamFields)") }
      // A client sends one field per name (fetch joins repeated ones); a fetch `no-cache` mode
      // is a browser's reload, `Cache-Control: max-age=0`.
      var upstreamRequest = (theirs.requestHeaders ?? []).map { ($0.name, Self.value($0)) }
      if theirs.cacheMode == "no-cache" { upstreamRequest.append(("Cache-Control", "max-age=0")) }
      let myRequest = Self.joined(step.requestHeaders.map { ($0.0, Self.value($0.1)) })
      if myRequest != Self.joined(upstreamRequest) {
        differences.append("\(at): request fields \(myRequest), upstream \(Self.joined(upstreamRequest))")
      }
    }
    return differences
  }

  /// Request fields as one line per name, in the order names first appear.
  static func joined(_ fields: [(String, String)]) -> [String] {
    var order: [String] = []
    var values: [String: [String]] = [:]
    for (name, value) in fields {
      let key = name.lowercased()
      if values[key] == nil { order.append(key) }
      values[key, default: []].append(value)
    }
    return order.map { "\($0): \(values[$0]!.joined(separator: ", "))" }
  }

  static func value(_ value: ConformanceValue) -> String {
    switch value {
    case .text(let text), .unrecorded(let text): text
    case .delta(let seconds): "now\(seconds >= 0 ? "+" : "")\(seconds)"
    }
  }

  static func value(_ field: UpstreamCacheTest.Field) -> String {
    if let seconds = field.delta { return "now\(seconds >= 0 ? "+" : "")\(seconds)" }
    return field.text ?? ""
  }

  /// A field as `name: value`, a date as `name: now+N`, an unrecorded value with ` (unrecorded)`.
  static func describe(_ field: (String, ConformanceValue)) -> String {
    let unrecorded = if case .unrecorded = field.1 { true } else { false }
    return "\(field.0): \(value(field.1))\(unrecorded ? " (unrecorded)" : "")"
  }

  static func describe(_ field: UpstreamCacheTest.Field) -> String {
    let unrecorded = field.delta == nil && field.unrecorded == true
    return "\(field.name): \(value(field))\(unrecorded ? " (unrecorded)" : "")"
  }
}
