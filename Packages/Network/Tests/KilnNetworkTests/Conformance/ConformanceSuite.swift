/// Every scenario, module by module of the suite.
enum ConformanceSuite {
  static var all: [ConformanceScenario] {
    freshness + parsing + responseDirectives + heuristic + statuses + requestDirectives + vary + conditional
      + headers + update304 + invalidation + partial + staleExtensions + other
  }
}
