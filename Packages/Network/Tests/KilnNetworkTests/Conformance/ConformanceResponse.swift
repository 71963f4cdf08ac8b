// Scenarios of the suite's cc-response, heuristic-freshness and status modules.

extension ConformanceSuite {
  static var responseDirectives: [ConformanceScenario] {
    let none = ["freshness-none"]
    let noStore = ["cc-resp-no-store"]
    let noCache = ["cc-resp-no-cache"]
    let revalidate = ["cc-resp-no-cache-revalidate"]
    func oldNew(_ id: String, _ directive: String) -> ConformanceScenario {
      ConformanceScenario(
        id, dependsOn: noStore,
        [
          .stored([("Cache-Control", "max-age=10000"), ("Expires", 10000), ("Date", 0), ("A", "1")]),
          .stored([("Cache-Control", .text(directive)), ("Date", 0), ("A", "2")]),
          ConformanceStep(expect: .cached, expectedResponseHeaders: [.equals("a", "1")]),
        ])
    }
    return [
      .twoStep(
        "cc-resp-private-private", .optimal, dependsOn: [], [("Cache-Control", "private, max-age=3600")], pause: false,
        then: .cached),
      .twoStep("cc-resp-no-store", dependsOn: [], [("Cache-Control", "no-store")], pause: false, then: .notCached),
      .twoStep(
        "cc-resp-no-store-case-insensitive", dependsOn: noStore, [("Cache-Control", "No-StOrE")], pause: false,
        then: .notCached),
      .twoStep(
        "cc-resp-no-store-fresh", dependsOn: noStore,
        [("Cache-Control", "max-age=10000, no-store"), ("Expires", 10000), ("Date", 0)], pause: false,
        then: .notCached),
      oldNew("cc-resp-no-store-old-new", "no-store"),
      oldNew("cc-resp-no-store-old-max-age", "no-store, max-age=0"),
      .twoStep(
        "cc-resp-no-cache", dependsOn: [],
        [("Cache-Control", "max-age=10000, no-cache"), ("Expires", 10000), ("Date", 0)], pause: false,
        then: .notCached),
      .twoStep(
        "cc-resp-no-cache-case-insensitive", dependsOn: noCache,
        [("Cache-Control", "max-age=10000, No-CaChE"), ("Expires", 10000), ("Date", 0)], pause: false,
        then: .notCached),
      .twoStep(
        "cc-resp-no-cache-revalidate", .optimal, dependsOn: noCache,
        [("Cache-Control", "no-cache"), ("ETag", "\"abcd\"")], pause: false, then: .etagValidated),
      .twoStep(
        "cc-resp-no-cache-revalidate-fresh", .optimal, dependsOn: noCache,
        [("Cache-Control", "max-age=10000, no-cache"), ("Expires", 10000), ("Date", 0), ("ETag", "\"abcd\"")],
        pause: false, then: .etagValidated),
      ConformanceScenario(
        "headers-omit-headers-listed-in-Cache-Control-no-cache-single", .check, dependsOn: revalidate,
        [
          .stored([
            ("Cache-Control", "no-cache=\"a\""), ("a", "1"), ("b", "2"), ("Cache-Control", "max-age=3600"), ("Date", 0),
          ]),
          ConformanceStep(
            expect: .cached, expectedResponseHeaders: [.equals("b", "2")], missingResponseHeaders: [("a", nil)]),
        ]),
      ConformanceScenario(
        "headers-omit-headers-listed-in-Cache-Control-no-cache", .check, dependsOn: revalidate,
        [
          .stored([
            ("Cache-Control", "no-cache=\"a, b\""), ("a", "1"), ("b", "2"), ("c", "3"),
            ("Cache-Control", "max-age=3600"), ("Date", 0),
          ]),
          ConformanceStep(
            expect: .cached, expectedResponseHeaders: [.equals("c", "3")],
            missingResponseHeaders: [("a", nil), ("b", nil)]),
        ]),
      .twoStep(
        "cc-resp-must-revalidate-fresh", .optimal, dependsOn: none,
        [("Cache-Control", "max-age=10000, must-revalidate"), ("ETag", "\"abcd\"")], pause: false, then: .cached),
      ConformanceScenario(
        "cc-resp-must-revalidate-stale", dependsOn: none,
        [
          .stored([("Cache-Control", "max-age=2, must-revalidate"), ("ETag", "\"abcd\"")], pause: false),
          .expecting(.cached, headers: [("Cache-Control", "max-age=2, must-revalidate"), ("ETag", "\"abcd\"")])
            .with {
              $0.setup = true
              $0.pause = true
            },
          .expecting(.etagValidated),
        ]),
      // A fetch with `cache: 'no-cache'` sends `Cache-Control: max-age=0`: the client asks for a
      // validated response the same way here.
      ConformanceScenario(
        "cc-resp-immutable-fresh", .optimal,
        [
          .stored([("Cache-Control", "max-age=10000, immutable"), ("ETag", "\"abcd\"")]),
          .expecting(.cached, requestHeaders: [("Cache-Control", "max-age=0")]),
        ]),
      ConformanceScenario(
        "cc-resp-immutable-stale",
        [
          .stored([("Cache-Control", "max-age=2, immutable"), ("ETag", "\"abcd\"")]),
          .expecting(.etagValidated, requestHeaders: [("Cache-Control", "max-age=0")]).with {
            $0.expectedRequestHeaders = [("cache-control", "max-age=0")]
          },
        ]),
    ]
  }

  static var heuristic: [ConformanceScenario] {
    let statuses: [(reused: Bool, code: Int, extra: (String, ConformanceValue)?)] = [
      (true, 200, nil), (false, 201, nil), (false, 202, nil), (true, 203, nil), (true, 204, nil), (false, 403, nil),
      (true, 404, nil), (true, 405, nil), (true, 410, nil), (true, 414, nil), (true, 501, nil), (false, 502, nil),
      (false, 503, nil), (false, 504, nil), (false, 599, nil), (true, 599, ("Cache-Control", "public")),
    ]
    var scenarios = statuses.map { reused, code, extra -> ConformanceScenario in
      // The body upstream's `httpContent` makes for a status code.
      let body: String? = code == 204 ? nil : "aaaaaaaaaaaaaaa"
      let expectation: ConformanceExpectation = reused ? .cached : .notCached
      return ConformanceScenario(
        "heuristic-\(code)-\(reused ? "cached" : "not_cached")", reused ? .optimal : .required,
        [
          ConformanceStep(
            status: code,
            responseHeaders: [("Last-Modified", .delta(-24 * 60 * 60)), ("Date", 0)] + (extra.map { [$0] } ?? []),
            responseBody: body, setup: true),
          ConformanceStep(status: code, responseBody: body, expect: expectation),
        ])
    }
    for delta in [5, 10, 30, 60, 300, 600, 1200, 1800, 3600, 3600 * 12, 3600 * 24] {
      scenarios.append(
        .twoStep(
          "heuristic-delta-\(delta)", .check, dependsOn: [], [("Last-Modified", .delta(-delta)), ("Date", 0)],
          then: .cached))
    }
    return scenarios
  }

  /// The 3xx ones are for shared caches only (a client follows redirects).
  static var statuses: [ConformanceScenario] {
    var scenarios: [ConformanceScenario] = []
    // 3xx only in shared caches (upstream's browser_skip): a browser follows redirects.
    for code in [200, 203, 204, 299, 301, 302, 303, 307, 308, 400, 404, 410, 499, 500, 502, 503, 504, 599] {
      // The body upstream's `httpContent` makes for a status code.
      let body: String? = code == 204 ? nil : "aaaaaaaaaaaaaaa"
      scenarios.append(
        ConformanceScenario(
          "status-\(code)-fresh", .optimal, dependsOn: ["freshness-max-age"],
          [
            ConformanceStep.fresh.with {
              $0.status = code
              $0.responseBody = body
            },
            ConformanceStep(status: code, responseBody: body, expect: .cached),
          ]))
      scenarios.append(
        ConformanceScenario(
          "status-\(code)-stale", dependsOn: ["status-\(code)-fresh"],
          [
            ConformanceStep.stale.with {
              $0.status = code
              $0.responseBody = body
            },
            ConformanceStep(responseBody: body, expect: .notCached),
          ]))
    }
    scenarios.append(
      .twoStep(
        "status-599-must-understand", dependsOn: ["status-599-fresh"],
        [("Cache-Control", "max-age=3600, no-store, must-understand")], pause: false, then: .notCached
      ).with599())
    scenarios.append(
      .twoStep(
        "status-200-must-understand", .optimal, dependsOn: ["status-200-fresh", "cc-resp-no-store-fresh"],
        [("Cache-Control", "max-age=3600, no-store, must-understand")], pause: false, then: .cached))
    return scenarios
  }
}

extension ConformanceScenario {
  /// This scenario with its first response answered with status 599.
  fileprivate func with599() -> ConformanceScenario {
    var copy = self
    copy.steps[0].status = 599
    return copy
  }
}
