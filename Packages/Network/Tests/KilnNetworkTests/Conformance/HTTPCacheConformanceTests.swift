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
    let results = try await ConformanceResults.run(ConformanceSuite.cdn, over: kind, policy: .shared)
    results.report("CDN-Cache-Control tests (shared cache, \(kind.rawValue))")
    #expect(results.required.count == 10)
    #expect(results.failing.isEmpty, "failing: \(results.failing.map { "\($0.id): \(results.reason($0.id))" })")
    #expect(results.scenarios.filter { $0.kind == .optimal }.allSatisfy { results.passes($0.id) })
  }

  @Test(
    "Conformance: the required private-cache scenarios pass, except the known failures",
    arguments: TransportKind.allCases)
  func conformance(kind: TransportKind) async throws {
    let ids = ConformanceSuite.all.map(\.id)
    #expect(Set(ids).count == ids.count, "duplicate scenario ids")
    let results = try await ConformanceResults.run(ConformanceSuite.all, over: kind, policy: .private)
    results.report("private-cache tests (\(kind.rawValue))")
    let failingIDs = Set(results.failing.map(\.id))
    let known = Self.knownFailures.merging(Self.knownFailures(of: kind)) { first, _ in first }
    for id in failingIDs.subtracting(known.keys).sorted() {
      Issue.record("\(id) fails and is not a known failure: \(results.reason(id))")
    }
    for id in Set(known.keys).subtracting(failingIDs).sorted() {
      Issue.record("\(id) is listed as a known failure but passes (or is not a required scenario): update the list")
    }
  }
}

/// What running a selection of scenarios gave: each scenario passes when its checks passed
/// and every scenario it depends on passes (the suite's rule).
struct ConformanceResults {
  let scenarios: [ConformanceScenario]
  /// Each scenario's outcome: `nil` when its checks passed, else why not.
  let outcomes: [String: String?]

  /// Runs `scenarios` against a loopback server through a cache with `policy` over `kind`.
  static func run(
    _ scenarios: [ConformanceScenario], over kind: TransportKind, policy: HTTPCachePolicy
  ) async throws -> ConformanceResults {
    let runner = ConformanceRunner()
    let server = try await TestServer.start { request in runner.answer(request) }
    var outcomes: [String: String?] = [:]
    try await kind.withTransport { base in
      for scenario in scenarios {
        outcomes[scenario.id] = await runner.run(scenario, server: server, base: base, policy: policy)
      }
    }
    try await server.stop()
    return ConformanceResults(scenarios: scenarios, outcomes: outcomes)
  }

  /// Whether the scenario `id` passes; a dependency that is not defined is an issue.
  func passes(_ id: String) -> Bool {
    guard let scenario = scenarios.first(where: { $0.id == id }) else {
      Issue.record("\(id) is depended on but not defined")
      return false
    }
    return outcomes[id] == .some(nil) && scenario.dependsOn.allSatisfy(passes)
  }

  /// Why the scenario `id` does not pass: its own failure, or the dependencies that fail.
  func reason(_ id: String) -> String {
    let dependencies = scenarios.first { $0.id == id }?.dependsOn ?? []
    return outcomes[id].flatMap { $0 }
      ?? "depends on \(dependencies.filter { !passes($0) }.joined(separator: ", "))"
  }

  var required: [ConformanceScenario] { scenarios.filter { $0.kind == .required } }

  /// The required scenarios that do not pass.
  var failing: [ConformanceScenario] { required.filter { !passes($0.id) } }

  /// Prints the figure (required passed), each failing required scenario with its reason,
  /// and the optimal and check scenarios that do not pass (reported, not counted).
  func report(_ selection: String) {
    let failing = failing
    print("HTTP cache conformance: passed \(required.count - failing.count) of \(required.count) required \(selection)")
    for scenario in failing { print("  failing \(scenario.id): \(reason(scenario.id))") }
    for (kindName, scenarioKind) in [("optimal", ConformanceKind.optimal), ("check", .check)] {
      let all = scenarios.filter { $0.kind == scenarioKind }
      let missed = all.filter { !passes($0.id) }.map(\.id)
      print("  \(kindName): \(all.count - missed.count) of \(all.count) pass; not: \(missed.joined(separator: ", "))")
    }
  }
}
