import Foundation
import KilnNetwork
import Testing
import _KilnTestServer

/// Kiln's HTTP cache against the scenarios of the public http-tests/cache-tests suite
/// (https://github.com/http-tests/cache-tests), re-expressed in Swift under the suite's test
/// ids (see `ConformanceSuite`), in each of upstream's selections: as a private (browser)
/// cache, as a shared cache (reverse proxy), and as a CDN (shared, with `CDN-Cache-Control`).
/// `ConformanceUpstreamTests` checks the scenarios against upstream's definitions.
///
/// A scenario passes when all its checks pass and every scenario it depends on passes (the
/// suite's rule). The figure counts the required ones; the test fails when a required scenario
/// outside the known failures fails, and also when one inside them passes, so the list stays
/// exact.
@Suite("HTTP cache conformance (http-tests/cache-tests)", .timeLimit(.minutes(5)))
struct HTTPCacheConformanceTests {
  /// The required scenarios Kiln's cache does not pass in `selection`, each with the reason.
  static func knownFailures(in selection: ConformanceSelection) -> [String: String] {
    switch selection {
    case .privateCache: [:]
    case .sharedCache, .cdn: [:]
    }
  }

  /// The required scenarios that fail with one transport only, each with the reason.
  static func knownFailures(of kind: TransportKind) -> [String: String] {
    switch kind {
    case .urlSession:
      {
        let redirect =
          "FoundationNetworking drops the body of a 3xx response the session does not follow (URLSessionTransport's "
          + "documented limit), so the stored response's body is empty"
        var failures = [
          "headers-store-Content-Encoding":
            "URLSession (libcurl) rejects the response: it does not know the scenario's made-up content coding"
        ]
        for code in [301, 302, 303, 307, 308] { failures["status-\(code)-stale"] = redirect }
        return failures
      }()
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

  @Test("Kiln's own stale-if-error scenarios (RFC 5861, not in the suite) pass", arguments: TransportKind.allCases)
  func staleIfError(kind: TransportKind) async throws {
    let results = try await ConformanceResults.run(ConformanceSuite.kilnStaleIfError, over: kind, policy: .private)
    for scenario in results.scenarios where !results.passes(scenario.id) {
      Issue.record("\(scenario.id): \(results.reason(scenario.id))")
    }
  }

  @Test(
    "Conformance: the required scenarios of each selection pass, except the known failures",
    arguments: ConformanceSelection.allCases, TransportKind.allCases)
  func conformance(selection: ConformanceSelection, kind: TransportKind) async throws {
    let scenarios = ConformanceSuite.scenarios(for: selection)
    let ids = ConformanceSuite.all.map(\.id)
    #expect(Set(ids).count == ids.count, "duplicate scenario ids")
    let policy: HTTPCachePolicy = selection == .privateCache ? .private : .shared
    let results = try await ConformanceResults.run(scenarios, over: kind, policy: policy)
    results.report("\(selection.rawValue)-cache tests (\(kind.rawValue))")
    let failingIDs = Set(results.failing.map(\.id))
    // A transport's known failures count where the selection has them as required scenarios.
    let required = Set(results.required.map(\.id))
    let known = Self.knownFailures(in: selection).merging(Self.knownFailures(of: kind)) { first, _ in first }
      .filter { required.contains($0.key) }
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
