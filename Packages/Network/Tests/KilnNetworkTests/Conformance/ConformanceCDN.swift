// Scenarios of the suite's cdn-cache-control module (RFC 9213), run against a shared cache:
// `CDN-Cache-Control` replaces `Cache-Control` and `Expires` there. The suite marks the field
// `false` (a CDN may remove it before the response goes on): `.unrecorded` here.

extension ConformanceSuite {
  static var cdn: [ConformanceScenario] {
    let none = ["freshness-none"]
    let maxAge = ["cdn-max-age"]
    func cdn(_ value: String) -> (String, ConformanceValue) { ("CDN-Cache-Control", .unrecorded(value)) }
    return [
      .twoStep("freshness-none", .check, dependsOn: [], [], then: .notCached),
      .twoStep("cdn-max-age", .optimal, dependsOn: none, [cdn("max-age=3600")], then: .cached),
      .twoStep("cdn-max-age-max", .optimal, dependsOn: none, [cdn("max-age=2147483648")], then: .cached),
      .twoStep("cdn-max-age-max-plus", .optimal, dependsOn: none, [cdn("max-age=99999999999")], then: .cached),
      .twoStep(
        "cdn-max-age-age", dependsOn: maxAge, [("Date", 0), cdn("max-age=3600"), ("Age", "7200")], then: .notCached),
      .twoStep(
        "cdn-max-age-space-before-equals", .check, dependsOn: maxAge,
        [("Cache-Control", "max-age=1"), cdn("max-age =100")], then: .notCached),
      .twoStep(
        "cdn-max-age-space-after-equals", .check, dependsOn: maxAge,
        [("Cache-Control", "max-age=1"), cdn("max-age= 100")], then: .notCached),
      .twoStep("cdn-max-age-0", dependsOn: maxAge, [cdn("max-age=0")], then: .notCached),
      .twoStep("cdn-max-age-extension", .optimal, dependsOn: maxAge, [cdn("foobar, max-age=3600")], then: .cached),
      .twoStep("cdn-max-age-case-insensitive", .check, dependsOn: maxAge, [cdn("MaX-aGe=3600")], then: .cached),
      .twoStep(
        "cdn-max-age-expires", .optimal, dependsOn: maxAge, [cdn("max-age=3600"), ("Expires", -10_000), ("Date", 0)],
        then: .cached),
      .twoStep(
        "cdn-max-age-cc-max-age-invalid-expires", .optimal, dependsOn: maxAge,
        [cdn("max-age=3600"), ("Expires", .unrecorded("0")), ("Date", 0)], then: .cached),
      .twoStep(
        "cdn-max-age-0-expires", dependsOn: maxAge, [cdn("max-age=0"), ("Expires", 10_000), ("Date", 0)],
        then: .notCached),
      .twoStep(
        "cdn-max-age-short-cc-max-age", .optimal, dependsOn: maxAge,
        [("Cache-Control", "max-age=1"), cdn("max-age=3600")],
        then: .cached),
      .twoStep(
        "cdn-max-age-long-cc-max-age", dependsOn: maxAge, [("Cache-Control", "max-age=3600"), cdn("max-age=1")],
        then: .notCached),
      .twoStep(
        "cdn-private", dependsOn: [],
        [("CDN-Cache-Control", "private"), ("Cache-Control", "max-age=10000"), ("Expires", 10_000), ("Date", 0)],
        pause: false, then: .notCached),
      .twoStep(
        "cdn-no-cache", dependsOn: [],
        [("CDN-Cache-Control", "no-cache"), ("Cache-Control", "max-age=10000"), ("Expires", 10_000), ("Date", 0)],
        pause: false, then: .notCached),
      .twoStep(
        "cdn-no-store-cc-fresh", dependsOn: none,
        [("Cache-Control", "max-age=10000"), cdn("no-store"), ("Expires", 10_000), ("Date", 0)], then: .notCached),
      .twoStep(
        "cdn-fresh-cc-nostore", dependsOn: none, [("Cache-Control", "no-store"), cdn("max-age=10000")], then: .cached),
      .twoStep(
        "cdn-cc-invalid-sh-type-unknown", dependsOn: maxAge,
        [cdn("max-age=10000, &&&&&"), ("Cache-Control", "no-store")], then: .notCached),
      .twoStep(
        "cdn-cc-invalid-sh-type-wrong", dependsOn: maxAge, [cdn("max-age=\"10000\""), ("Cache-Control", "no-store")],
        then: .notCached),
      // Whether a CDN passes the field on, and what it says of a response it keeps longer than
      // Cache-Control allows (checks).
      ConformanceScenario(
        "cdn-remove-header", .check,
        [
          ConformanceStep(
            responseHeaders: [
              ("Cache-Control", "max-age=10000"), cdn("foo"), ("Expires", 10_000), ("Date", 0),
            ], expectedResponseHeaders: [.equals("CDN-Cache-Control", "foo")])
        ]),
      ConformanceScenario(
        "cdn-remove-age-exceed", .check, dependsOn: maxAge,
        [
          .stored([("Cache-Control", "max-age=1"), ("CDN-Cache-Control", "max-age=10000"), ("Date", 0)]),
          ConformanceStep(expectedResponseHeaders: [.present("Age")]),
        ]),
      ConformanceScenario(
        "cdn-date-update-exceed", .check, dependsOn: maxAge,
        [
          .stored([("Cache-Control", "max-age=1"), ("CDN-Cache-Control", "max-age=10000"), ("Date", 0)]),
          ConformanceStep(expectedResponseHeaders: [.equals("Date", 0)]),
        ]),
      ConformanceScenario(
        "cdn-expires-update-exceed", .check, dependsOn: maxAge,
        [
          .stored([
            ("Cache-Control", "max-age=1"), ("Expires", 1), ("CDN-Cache-Control", "max-age=10000"), ("Date", 0),
          ]),
          ConformanceStep(expectedResponseHeaders: [.equals("Expires", 1)]),
        ]),
    ]
  }
}
