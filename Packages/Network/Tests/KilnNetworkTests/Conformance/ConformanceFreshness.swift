// Scenarios of the suite's freshness and parsing modules: cc-freshness, cc-parse, age-parse,
// expires-freshness, expires-parse.

extension ConformanceScenario {
  /// The commonest shape: a response with `headers` is stored, (usually) 3 seconds pass, and
  /// the same request must be answered as `expectation`.
  static func twoStep(
    _ id: String, _ kind: ConformanceKind = .required, dependsOn: [String],
    _ headers: [(String, ConformanceValue)], pause: Bool = true, then expectation: ConformanceExpectation
  ) -> ConformanceScenario {
    ConformanceScenario(id, kind, dependsOn: dependsOn, [.stored(headers, pause: pause), .expecting(expectation)])
  }
}

extension ConformanceSuite {
  static var freshness: [ConformanceScenario] {
    let none = ["freshness-none"]
    let maxAge = ["freshness-max-age"]
    return [
      // cc-freshness
      .twoStep("freshness-none", .check, dependsOn: [], [], then: .notCached),
      .twoStep("freshness-max-age", .optimal, dependsOn: none, [("Cache-Control", "max-age=3600")], then: .cached),
      ConformanceScenario("freshness-max-age-stale", dependsOn: maxAge, [.becomeStale, .expecting(.notCached)]),
      .twoStep("freshness-max-age-0", dependsOn: none, [("Cache-Control", "max-age=0")], then: .notCached),
      .twoStep(
        "freshness-max-age-max-minus-1", .optimal, dependsOn: none, [("Cache-Control", "max-age=2147483647")],
        then: .cached),
      .twoStep(
        "freshness-max-age-max", .optimal, dependsOn: none, [("Cache-Control", "max-age=2147483648")], then: .cached),
      .twoStep(
        "freshness-max-age-max-plus-1", .optimal, dependsOn: none, [("Cache-Control", "max-age=2147483649")],
        then: .cached),
      .twoStep(
        "freshness-max-age-max-plus", .optimal, dependsOn: none, [("Cache-Control", "max-age=99999999999")],
        then: .cached),
      .twoStep(
        "freshness-max-age-age", dependsOn: maxAge,
        [("Date", 0), ("Cache-Control", "max-age=3600"), ("Age", "7200")], then: .notCached),
      .twoStep(
        "freshness-max-age-date", .check, dependsOn: maxAge, [("Date", -7200), ("Cache-Control", "max-age=3600")],
        then: .notCached),
      .twoStep(
        "freshness-max-age-expires", .optimal, dependsOn: maxAge,
        [("Cache-Control", "max-age=3600"), ("Expires", -7200), ("Date", 0)], then: .cached),
      .twoStep(
        "freshness-max-age-expires-invalid", .optimal, dependsOn: maxAge,
        [("Cache-Control", "max-age=3600"), ("Expires", .unrecorded("0")), ("Date", 0)], then: .cached),
      .twoStep(
        "freshness-max-age-0-expires", dependsOn: none,
        [("Expires", 3600), ("Cache-Control", "max-age=0"), ("Date", 0)], then: .notCached),
      .twoStep(
        "freshness-max-age-extension", .optimal, dependsOn: maxAge, [("Cache-Control", "foobar, max-age=3600")],
        then: .cached),
      .twoStep(
        "freshness-max-age-case-insenstive", .optimal, dependsOn: maxAge, [("Cache-Control", "MaX-aGe=3600")],
        then: .cached),
      .twoStep("freshness-max-age-negative", dependsOn: none, [("Cache-Control", "max-age=-3600")], then: .notCached),
      .twoStep(
        "freshness-max-age-s-maxage-private", dependsOn: maxAge, [("Cache-Control", "s-maxage=3600, max-age=1")],
        then: .notCached),
      .twoStep(
        "freshness-max-age-s-maxage-private-multiple", dependsOn: maxAge,
        [("Cache-Control", "s-maxage=3600"), ("Cache-Control", "max-age=1")], then: .notCached),
      // age-parse
      ageParse("age-parse-nonnumeric", ["abc"], then: .cached),
      ageParse("age-parse-negative", ["-7200"], then: .cached),
      ageParse("age-parse-float", ["7200.0"], then: .cached),
      ageParse("age-parse-large-minus-one", ["2147483647"], then: .notCached),
      ageParse("age-parse-large", ["2147483648"], then: .notCached),
      ageParse("age-parse-larger", ["2147483649"], then: .notCached),
      ageParse("age-parse-suffix", ["7200, 0"], then: .notCached),
      ageParse("age-parse-prefix", ["0, 7200"], then: .cached),
      ageParse("age-parse-suffix-twoline", ["7200", "0"], then: .notCached),
      ageParse("age-parse-prefix-twoline", ["0", "7200"], then: .cached),
      ageParse("age-parse-dup-0", ["0, 0"], then: .cached),
      ageParse("age-parse-dup-0-twoline", ["0", "0"], then: .cached),
      ageParse("age-parse-dup-old", ["3600", "3600"], maxAge: 10000, then: .cached),
      ageParse("age-parse-parameter", ["7200;foo=bar"], kind: .check, then: .notCached),
      ageParse("age-parse-numeric-parameter", ["7200;foo=111"], kind: .check, then: .notCached),
    ]
  }

  /// An age-parse scenario: `max-age` with `Age` lines.
  static func ageParse(
    _ id: String, _ ages: [String], kind: ConformanceKind = .required, maxAge: Int = 3600,
    then expectation: ConformanceExpectation
  ) -> ConformanceScenario {
    .twoStep(
      id, kind, dependsOn: ["freshness-max-age-age"],
      [("Date", 0), ("Cache-Control", .text("max-age=\(maxAge)"))]
        + ages.map { ("Age", ConformanceValue.unrecorded($0)) },
      then: expectation)
  }

  static var parsing: [ConformanceScenario] {
    let none = ["freshness-none"]
    let maxAge = ["freshness-max-age"]
    let future = ["freshness-expires-future"]
    func cc(_ values: String...) -> [(String, ConformanceValue)] {
      values.map { ("Cache-Control", .unrecorded($0)) }
    }
    func expires(_ values: String...) -> [(String, ConformanceValue)] {
      values.map { ("Expires", .unrecorded($0)) } + [("Date", 0)]
    }
    return [
      // cc-parse
      .twoStep(
        "freshness-max-age-two-fresh-stale-sameline", .check, dependsOn: none, cc("max-age=1800, max-age=1"),
        then: .cached),
      .twoStep(
        "freshness-max-age-two-fresh-stale-sepline", .check, dependsOn: none, cc("max-age=1800", "max-age=1"),
        then: .cached),
      .twoStep(
        "freshness-max-age-two-stale-fresh-sameline", .check, dependsOn: none, cc("max-age=1, max-age=1800"),
        then: .cached),
      .twoStep(
        "freshness-max-age-two-stale-fresh-sepline", .check, dependsOn: none, cc("max-age=1", "max-age=1800"),
        then: .cached),
      .twoStep("freshness-max-age-quoted", .check, dependsOn: maxAge, cc("max-age=\"3600\""), then: .cached),
      .twoStep(
        "freshness-max-age-ignore-quoted", dependsOn: maxAge, cc("extension=\"max-age=3600\", max-age=1"),
        then: .notCached),
      .twoStep(
        "freshness-max-age-ignore-quoted-rev", dependsOn: maxAge, cc("max-age=1, extension=\"max-age=3600\""),
        then: .notCached),
      .twoStep("freshness-max-age-space-before-equals", .check, dependsOn: none, cc("max-age =3600"), then: .notCached),
      .twoStep("freshness-max-age-space-after-equals", .check, dependsOn: none, cc("max-age= 3600"), then: .notCached),
      .twoStep("freshness-max-age-leading-zero", dependsOn: none, cc("max-age=003600"), then: .cached),
      .twoStep("freshness-max-age-single-quoted", dependsOn: none, cc("max-age='3600'"), then: .notCached),
      .twoStep("freshness-max-age-decimal-zero", .check, dependsOn: none, cc("max-age=3600.0"), then: .cached),
      .twoStep("freshness-max-age-decimal-five", .check, dependsOn: none, cc("max-age=3600.5"), then: .cached),
      .twoStep("freshness-max-age-a100", .check, dependsOn: none, cc("max-age=a3600"), then: .cached),
      .twoStep("freshness-max-age-100a", .check, dependsOn: none, cc("max-age=3600a"), then: .cached),
      // expires-freshness
      .twoStep(
        "freshness-expires-future", .optimal, dependsOn: none, [("Expires", .delta(30 * 24 * 60 * 60)), ("Date", 0)],
        then: .cached),
      .twoStep(
        "freshness-expires-past", dependsOn: future, [("Expires", .delta(-30 * 24 * 60 * 60)), ("Date", 0)],
        then: .notCached),
      .twoStep(
        "freshness-expires-present", dependsOn: none, [("Expires", 0), ("Date", 0)], pause: false, then: .notCached),
      .twoStep("freshness-expires-old-date", dependsOn: future, [("Expires", 300), ("Date", 400)], then: .notCached),
      .twoStep("freshness-expires-invalid", dependsOn: future, expires("0"), then: .notCached),
      .twoStep(
        "freshness-expires-invalid-date", .optimal, dependsOn: future, [("Date", .unrecorded("foo")), ("Expires", 10)],
        pause: false, then: .cached),
      .twoStep(
        "freshness-expires-age-slow-date", dependsOn: future, [("Date", -10), ("Expires", 10), ("Age", "25")],
        pause: false, then: .notCached),
      .twoStep(
        "freshness-expires-age-fast-date", dependsOn: future, [("Date", 10), ("Expires", 20), ("Age", "15")],
        pause: false, then: .notCached),
      // expires-parse
      .twoStep(
        "freshness-expires-32bit", .optimal, dependsOn: future, expires("Tue, 19 Jan 2038 14:14:08 GMT"), then: .cached),
      .twoStep(
        "freshness-expires-far-future", .optimal, dependsOn: future, expires("Sun, 21 Nov 2286 04:46:39 GMT"),
        then: .cached),
      .twoStep(
        "freshness-expires-rfc850", .optimal, dependsOn: future, expires("Thursday, 18-Aug-50 02:01:18 GMT"),
        then: .cached),
      .twoStep(
        "freshness-expires-ansi-c", .optimal, dependsOn: future, expires("Thu Aug  8 02:01:18 2050"), then: .cached),
      .twoStep(
        "freshness-expires-wrong-case-weekday", .optimal, dependsOn: future, expires("THU, 18 Aug 2050 02:01:18 GMT"),
        then: .cached),
      .twoStep(
        "freshness-expires-wrong-case-month", .optimal, dependsOn: future, expires("Thu, 18 AUG 2050 02:01:18 GMT"),
        then: .cached),
      .twoStep(
        "freshness-expires-wrong-case-tz", .optimal, dependsOn: future, expires("Thu, 18 Aug 2050 02:01:18 gMT"),
        then: .cached),
      .twoStep(
        "freshness-expires-invalid-utc", dependsOn: future, expires("Thu, 18 Aug 2050 02:01:18 UTC"), then: .notCached),
      .twoStep(
        "freshness-expires-invalid-aest", dependsOn: future, expires("Thu, 18 Aug 2050 02:01:18 AEST"), then: .notCached
      ),
      .twoStep(
        "freshness-expires-invalid-2-digit-year", dependsOn: future, expires("Thu, 18 Aug 50 02:01:18 GMT"),
        then: .notCached),
      .twoStep(
        "freshness-expires-invalid-no-comma", dependsOn: future, expires("Thu 18 Aug 2050 02:01:18 GMT"),
        then: .notCached),
      .twoStep(
        "freshness-expires-invalid-multiple-spaces", dependsOn: future, expires("Thu, 18  Aug  2050 02:01:18 GMT"),
        pause: false, then: .notCached),
      .twoStep(
        "freshness-expires-invalid-date-dashes", dependsOn: future, expires("Thu, 18-Aug-2050 02:01:18 GMT"),
        pause: false, then: .notCached),
      .twoStep(
        "freshness-expires-invalid-time-periods", dependsOn: future, expires("Thu, 18 Aug 2050 02.01.18 GMT"),
        pause: false, then: .notCached),
      .twoStep(
        "freshness-expires-invalid-1-digit-hour", dependsOn: future, expires("Thu, 18 Aug 2050 2:01:18 GMT"),
        pause: false, then: .notCached),
      .twoStep(
        "freshness-expires-invalid-multiple-lines", dependsOn: future,
        expires("Thu, 18 Aug 2050 2:01:18 GMT", "Thu, 18 Aug 2050 2:01:19 GMT"), pause: false, then: .notCached),
    ]
  }
}
