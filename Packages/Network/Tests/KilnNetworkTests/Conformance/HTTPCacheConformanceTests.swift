import Foundation
import KilnNetwork
import Testing
import _KilnTestServer

/// Kiln's HTTP cache, as a private cache, against the scenarios of the public
/// http-tests/cache-tests suite (https://github.com/http-tests/cache-tests), re-expressed in
/// Swift under the suite's test ids (see `ConformanceSuite`).
///
/// A scenario passes when all its checks pass and every scenario it depends on passes (the
/// suite's rule). The figure counts the required ones; the test fails when a required scenario
/// outside ``knownFailures`` fails, and also when one inside it passes, so the list stays
/// exact.
@Suite("HTTP cache conformance (http-tests/cache-tests, private cache)", .timeLimit(.minutes(5)))
struct HTTPCacheConformanceTests {
  /// The required scenarios Kiln's cache does not pass, each with the reason.
  static let knownFailures: [String: String] = [:]

  /// The required scenarios that fail with one transport only, each with the reason.
  static func knownFailures(of kind: TransportKind) -> [String: String] {
    switch kind {
    case .urlSession:
      [
        "headers-store-Content-Encoding":
          "URLSession (libcurl) rejects the response: it does not know the scenario's made-up content coding"
      ]
    #if AsyncHTTPClient
      case .asyncHTTPClient: [:]
    #endif
    }
  }

  @Test(
    "Conformance: the required CDN-Cache-Control scenarios (RFC 9213) pass in a shared cache",
    arguments: TransportKind.allCases)
  func targetedCacheControl(kind: TransportKind) async throws {
    let scenarios = ConformanceSuite.cdn
    let runner = ConformanceRunner()
    let server = try await TestServer.start { request in runner.answer(request) }
    var outcomes: [String: String?] = [:]
    try await kind.withTransport { base in
      for scenario in scenarios {
        outcomes[scenario.id] = await runner.run(scenario, server: server, base: base, policy: .shared)
      }
    }
    try await server.stop()
    let byID = Dictionary(uniqueKeysWithValues: scenarios.map { ($0.id, $0) })
    func passes(_ id: String) -> Bool {
      guard let scenario = byID[id] else { return false }
      return outcomes[id] == .some(nil) && scenario.dependsOn.allSatisfy(passes)
    }
    let required = scenarios.filter { $0.kind == .required }
    let failing = required.filter { !passes($0.id) }.map(\.id)
    let optimal = scenarios.filter { $0.kind == .optimal }
    print(
      "HTTP cache conformance: passed \(required.count - failing.count) of \(required.count) required "
        + "CDN-Cache-Control tests, \(optimal.filter { passes($0.id) }.count) of \(optimal.count) optimal "
        + "(shared cache, \(kind.rawValue)); checks not passed: "
        + scenarios.filter { $0.kind == .check && !passes($0.id) }.map(\.id).joined(separator: ", "))
    #expect(required.count == 10)
    #expect(
      failing.isEmpty, "failing: \(failing.map { "\($0): \(outcomes[$0].flatMap { $0 } ?? "a dependency fails")" })")
    #expect(optimal.allSatisfy { passes($0.id) })
  }

  @Test(
    "Conformance: the required private-cache scenarios pass, except the known failures",
    arguments: TransportKind.allCases)
  func conformance(kind: TransportKind) async throws {
    let scenarios = ConformanceSuite.all
    let ids = scenarios.map(\.id)
    #expect(Set(ids).count == ids.count, "duplicate scenario ids")
    let runner = ConformanceRunner()
    let server = try await TestServer.start { request in runner.answer(request) }
    var outcomes: [String: String?] = [:]
    try await kind.withTransport { base in
      for scenario in scenarios {
        outcomes[scenario.id] = await runner.run(scenario, server: server, base: base)
      }
    }
    try await server.stop()

    let byID = Dictionary(uniqueKeysWithValues: scenarios.map { ($0.id, $0) })
    var memo: [String: Bool] = [:]
    func passes(_ id: String) -> Bool {
      if let known = memo[id] { return known }
      guard let scenario = byID[id] else {
        Issue.record("\(id) is depended on but not defined")
        return false
      }
      let result = outcomes[id] == .some(nil) && scenario.dependsOn.allSatisfy(passes)
      memo[id] = result
      return result
    }
    let required = scenarios.filter { $0.kind == .required }
    let failing = required.filter { !passes($0.id) }
    print(
      "HTTP cache conformance: passed \(required.count - failing.count) of \(required.count) "
        + "required private-cache tests (\(kind.rawValue))")
    for scenario in failing {
      let reason =
        outcomes[scenario.id].flatMap { $0 }
        ?? "depends on \(scenario.dependsOn.filter { !passes($0) }.joined(separator: ", "))"
      print("  failing \(scenario.id): \(reason)")
    }
    // The optimal and check scenarios are not counted, only reported.
    for (kindName, scenarioKind) in [("optimal", ConformanceKind.optimal), ("check", .check)] {
      let all = scenarios.filter { $0.kind == scenarioKind }
      let missed = all.filter { !passes($0.id) }.map(\.id)
      print("  \(kindName): \(all.count - missed.count) of \(all.count) pass; not: \(missed.joined(separator: ", "))")
    }
    let failingIDs = Set(failing.map(\.id))
    let known = Self.knownFailures.merging(Self.knownFailures(of: kind)) { first, _ in first }
    for id in failingIDs.subtracting(known.keys).sorted() {
      Issue.record("\(id) fails and is not a known failure: \(outcomes[id].flatMap { $0 } ?? "a dependency fails")")
    }
    for id in Set(known.keys).subtracting(failingIDs).sorted() {
      Issue.record("\(id) is listed as a known failure but passes (or is not a required scenario): update the list")
    }
  }
}
