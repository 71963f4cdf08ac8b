// Scenarios of the suite's cc-request, pragma, vary and vary-parse modules.

extension ConformanceSuite {
  static var requestDirectives: [ConformanceScenario] {
    // Upstream's stored responses: its `fresh` and `becomeStale` templates (a 3-second pause
    // after each), or fields of their own without a pause.
    func ask(
      _ id: String, dependsOn: [String] = ["freshness-max-age"], _ stored: ConformanceStep, _ directive: String,
      then expectation: ConformanceExpectation
    ) -> ConformanceScenario {
      ConformanceScenario(
        id, .check, dependsOn: dependsOn,
        [stored, .expecting(expectation, requestHeaders: [("Cache-Control", .text(directive))])])
    }
    func stored(_ fields: [(String, ConformanceValue)]) -> ConformanceStep { .stored(fields, pause: false) }
    return [
      ask("ccreq-ma0", .fresh, "max-age=0", then: .notCached),
      ask("ccreq-ma1", .fresh, "max-age=1", then: .notCached),
      ask("ccreq-magreaterage", .fresh(adding: [("Age", "1800")]), "max-age=600", then: .notCached),
      ask("ccreq-max-stale", dependsOn: ["freshness-max-age-stale"], .becomeStale, "max-stale=1000", then: .cached),
      ask(
        "ccreq-max-stale-age", stored([("Cache-Control", "max-age=1500"), ("Age", "2000")]), "max-stale=1000",
        then: .cached),
      ask("ccreq-min-fresh", stored([("Cache-Control", "max-age=1500")]), "min-fresh=2000", then: .notCached),
      ask(
        "ccreq-min-fresh-age", stored([("Cache-Control", "max-age=1500"), ("Age", "1000")]), "min-fresh=1000",
        then: .notCached),
      ask("ccreq-no-cache", stored([("Cache-Control", "max-age=3600")]), "no-cache", then: .notCached),
      ask(
        "ccreq-no-cache-lm", stored([("Cache-Control", "max-age=3600"), ("Last-Modified", -10000), ("Date", 0)]),
        "no-cache", then: .lmValidated),
      ask(
        "ccreq-no-cache-etag",
        stored([("Cache-Control", "max-age=3600"), ("ETag", .text("\"\(httpContent("abc"))\""))]), "no-cache",
        then: .etagValidated),
      ask("ccreq-no-store", .fresh, "no-store", then: .notCached),
      ConformanceScenario(
        "ccreq-oic", .check,
        [
          ConformanceStep(
            requestHeaders: [("Cache-Control", "only-if-cached")], expectedStatus: 504, expectedBody: .some(nil))
        ]),
      // pragma
      ConformanceScenario(
        "pragma-request-no-cache", .check, dependsOn: ["freshness-max-age"],
        [.fresh, .expecting(.cached, requestHeaders: [("Pragma", "no-cache")])]),
      ConformanceScenario(
        "pragma-request-extension", .check, dependsOn: ["freshness-max-age"],
        [.fresh, .expecting(.cached, requestHeaders: [("Pragma", "unrecognised-extension")])]),
      .twoStep(
        "pragma-response-no-cache", .check, dependsOn: ["freshness-max-age"],
        [("Cache-Control", "max-age=3600"), ("Pragma", "no-cache")],
        pause: false, then: .cached),
      .twoStep(
        "pragma-response-no-cache-heuristic", .check, dependsOn: ["heuristic-200-cached"],
        [("Date", 0), ("Last-Modified", -10000), ("Pragma", "no-cache")], pause: false, then: .cached),
      .twoStep(
        "pragma-response-extension", .check, dependsOn: ["freshness-max-age"],
        [("Cache-Control", "max-age=3600"), ("Pragma", "unrecognised-extension")], pause: false, then: .cached),
    ]
  }

  static var vary: [ConformanceScenario] {
    let varies: [(String, ConformanceValue)] = [
      ("Cache-Control", "max-age=5000"), ("Last-Modified", -3000), ("Date", 0),
    ]
    func setup(_ request: [(String, ConformanceValue)], vary: ConformanceValue) -> ConformanceStep {
      .stored(varies + [("Vary", vary)], pause: false, requestHeaders: request)
    }
    let one = setup([("Foo", "1")], vary: "Foo")
    let two = setup([("Foo", "1"), ("Bar", "abc")], vary: .unrecorded("Foo, Bar"))
    let three = setup([("Foo", "1"), ("Bar", "abc"), ("Baz", "789")], vary: .unrecorded("Foo, Bar, Baz"))
    func then(_ expectation: ConformanceExpectation, _ headers: [(String, ConformanceValue)]) -> ConformanceStep {
      .expecting(expectation, requestHeaders: headers)
    }
    let match = ["vary-match"]
    // The suite's vary-parse setup appends `Vary` to its template's fields (its templates
    // concatenate).
    func parse(_ id: String, _ values: [String]) -> ConformanceScenario {
      ConformanceScenario(
        id, dependsOn: match,
        [
          .stored(
            varies + values.map { ("Vary", .unrecorded($0)) }, pause: false,
            requestHeaders: [("Foo", "1"), ("Baz", "789")]),
          then(.notCached, [("Foo", "1"), ("Baz", "789")]),
        ])
    }
    func normalise(
      _ id: String, _ name: String, _ first: String, _ second: String, extra: [(String, ConformanceValue)] = []
    ) -> ConformanceScenario {
      ConformanceScenario(
        id, .optimal, dependsOn: match,
        [
          .stored(varies + [("Vary", .text(name))] + extra, pause: false, requestHeaders: [(name, .text(first))]),
          then(.cached, [(name, .text(second))]),
        ])
    }
    return [
      ConformanceScenario(
        "vary-match", .optimal, dependsOn: ["freshness-max-age"], [one, then(.cached, [("Foo", "1")])]),
      ConformanceScenario("vary-no-match", dependsOn: match, [one, then(.notCached, [("Foo", "2")])]),
      ConformanceScenario(
        "vary-omit-stored", dependsOn: match, [setup([], vary: "Foo"), then(.notCached, [("Foo", "1")])]),
      ConformanceScenario("vary-omit", dependsOn: match, [one, then(.notCached, [])]),
      ConformanceScenario(
        "vary-invalidate", .optimal, dependsOn: match,
        [
          one.with { $0.responseBody = httpContent("foo_1") },
          ConformanceStep(
            requestHeaders: [("Foo", "2")], responseHeaders: varies + [("Vary", "Foo")],
            responseBody: httpContent("foo_2"), setup: true, expect: .notCached),
          ConformanceStep(requestHeaders: [("Foo", "1")], responseBody: httpContent("foo_1"), expect: .cached),
        ]),
      // The suite's setup appends `Other` to its template's `Foo: 1` (its templates concatenate).
      ConformanceScenario(
        "vary-cache-key", .optimal, dependsOn: match,
        [setup([("Foo", "1"), ("Other", "2")], vary: "Foo"), then(.cached, [("Foo", "1"), ("Other", "3")])]),
      ConformanceScenario(
        "vary-2-match", .optimal, dependsOn: match, [two, then(.cached, [("Foo", "1"), ("Bar", "abc")])]),
      ConformanceScenario(
        "vary-2-no-match", dependsOn: ["vary-2-match"], [two, then(.notCached, [("Foo", "2"), ("Bar", "abc")])]),
      ConformanceScenario("vary-2-match-omit", dependsOn: ["vary-2-match"], [two, then(.notCached, [])]),
      ConformanceScenario(
        "vary-3-match", .optimal, dependsOn: ["vary-2-match"],
        [three, then(.cached, [("Foo", "1"), ("Bar", "abc"), ("Baz", "789")])]),
      ConformanceScenario(
        "vary-3-no-match", dependsOn: ["vary-3-match"],
        [three, then(.notCached, [("Foo", "2"), ("Bar", "abc"), ("Baz", "789")])]),
      ConformanceScenario(
        "vary-3-order", dependsOn: ["vary-3-match"],
        [three, then(.notCached, [("Foo", "1"), ("Baz", "789"), ("Bar", "abcde")])]),
      ConformanceScenario(
        "vary-3-omit", .optimal, dependsOn: ["vary-3-match"],
        [
          // Upstream writes this one's fields in another order.
          .stored(
            [
              ("Cache-Control", "max-age=5000"), ("Date", 0), ("Last-Modified", -3000),
              ("Vary", .unrecorded("Foo, Bar, Baz")),
            ], pause: false, requestHeaders: [("Foo", "1"), ("Baz", "789")]),
          then(.cached, [("Foo", "1"), ("Baz", "789")]),
        ]),
      ConformanceScenario(
        "vary-star",
        [
          setup([("Foo", "1"), ("Baz", "789")], vary: "*"),
          then(.notCached, [("Foo", "1"), ("Baz", "789")]),
        ]),
      // Two `Foo` lines are sent as one combined line: the transports take one value per name.
      normalise("vary-normalise-combine", "Foo", "1, 2", "1, 2"),
      normalise("vary-normalise-lang-order", "Accept-Language", "en, de", "de, en"),
      normalise("vary-normalise-lang-case", "Accept-Language", "en, de", "eN, De"),
      normalise("vary-normalise-lang-space", "Accept-Language", "en, de", " en ,   de"),
      normalise(
        "vary-normalise-lang-select", "Accept-Language", "en, de", "fr;q=0.5, de;q=1.0",
        extra: [("Content-Language", "de")]),
      normalise("vary-normalise-space", "Foo", "1,2", " 1, 2 "),
      // vary-parse
      parse("vary-syntax-star", ["*"]),
      parse("vary-syntax-star-star", ["*, *"]),
      parse("vary-syntax-star-star-lines", ["*", "*"]),
      parse("vary-syntax-empty-star", [", *"]),
      parse("vary-syntax-empty-star-lines", ["", "*"]),
      parse("vary-syntax-star-foo", ["*, Foo"]),
      parse("vary-syntax-foo-star", ["Foo, *"]),
    ]
  }
}
