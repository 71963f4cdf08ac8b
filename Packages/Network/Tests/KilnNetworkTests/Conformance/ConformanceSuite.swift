/// Every scenario, module by module of the suite.
enum ConformanceSuite {
  static var all: [ConformanceScenario] {
    freshness + parsing + responseDirectives + heuristic + statuses + requestDirectives + vary + conditional
      + headers + update304 + invalidation + partial + staleExtensions + staleOnClose + updateHead + other + sharedOnly
  }
}

extension ConformanceSuite {
  /// The value upstream's `httpContent(key)` (tests/lib/utils.mjs) makes for `key`: `length`
  /// lowercase letters stepping by the sum of the key's UTF-16 code units. A number as the key
  /// (a status code) has no length there, so it gives `aaaaaaaaaaaaaaa`: pass `""`.
  static func httpContent(_ key: String, length: Int = 15) -> String {
    let seed = key.utf16.reduce(0) { $0 + Int($1) }
    return String((0..<length).map { Character(UnicodeScalar(UInt8((($0 * seed) % 26) + 97))) })
  }
}
