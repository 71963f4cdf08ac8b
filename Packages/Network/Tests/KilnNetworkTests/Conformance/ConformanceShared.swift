// Scenarios the suite runs against shared caches only (`browser_skip`: reverse proxies and
// CDNs): s-maxage, private responses, authenticated requests, redirects, and a cache that
// answers the client's own conditional requests (conditional-lm, conditional-inm); and the
// cc-stale scenarios whose origin drops the connection.

extension ConformanceStep {
  /// A request the client makes conditional itself, answered from the cache with a 304.
  static func notModified(_ requestHeaders: [(String, ConformanceValue)], magicIMS: Bool = false) -> ConformanceStep {
    ConformanceStep(requestHeaders: requestHeaders, magicIMS: magicIMS, expect: .cached, expectedStatus: 304)
  }

  /// The server drops the connection; the client must not get the stored response (any
  /// status, or none).
  static var droppedNotServed: ConformanceStep {
    ConformanceStep().with {
      $0.disconnect = true
      $0.anyStatus = true
      $0.missingResponseHeaders = [("Server-Request-Count", nil)]
      $0.checksBody = false
    }
  }

  /// The server drops the connection; the client gets the stored response.
  static var droppedServedStale: ConformanceStep {
    ConformanceStep(expect: .cached).with { $0.disconnect = true }
  }
}

extension ConformanceSuite {
  static var sharedOnly: [ConformanceScenario] {
    let sMaxAge = ["freshness-s-maxage-shared"]
    let maxAge = ["freshness-max-age"]
    let strong = ["conditional-etag-strong-respond"]
    let weak = ["conditional-etag-weak-respond"]
    let authorization = ["other-authorization"]
    func etag(_ tag: String, asked: String, _ id: String, _ kind: ConformanceKind, dependsOn: [String])
      -> ConformanceScenario
    {
      ConformanceScenario(
        id, kind, dependsOn: dependsOn,
        [.fresh(adding: [("ETag", .text(tag))]), .notModified([("If-None-Match", .text(asked))])])
    }
    func authenticated(_ id: String, _ cacheControl: String) -> ConformanceScenario {
      ConformanceScenario(
        id, .optimal, dependsOn: authorization,
        [
          .stored([("Cache-Control", .text(cacheControl)), ("Date", 0)], requestHeaders: [("Authorization", "FOO")])
            .with { $0.expectedRequestHeaders = [("Authorization", "FOO")] },
          .expecting(.cached),
        ])
    }
    return [
      // cc-freshness
      .twoStep(
        "freshness-s-maxage-shared", dependsOn: ["freshness-none"], [("Cache-Control", "s-maxage=3600")], then: .cached),
      .twoStep(
        "freshness-max-age-s-maxage-shared-longer", dependsOn: sMaxAge, [("Cache-Control", "max-age=3600, s-maxage=1")],
        then: .notCached),
      .twoStep(
        "freshness-max-age-s-maxage-shared-longer-reversed", dependsOn: sMaxAge,
        [("Cache-Control", "s-maxage=1, max-age=3600")], then: .notCached),
      .twoStep(
        "freshness-max-age-s-maxage-shared-longer-multiple", dependsOn: sMaxAge,
        [("Cache-Control", "max-age=3600"), ("Cache-Control", "s-maxage=1")], then: .notCached),
      .twoStep(
        "freshness-max-age-s-maxage-shared-shorter", .optimal, dependsOn: sMaxAge,
        [("Cache-Control", "max-age=1, s-maxage=3600")], then: .cached),
      .twoStep(
        "freshness-max-age-s-maxage-shared-shorter-expires", .optimal, dependsOn: sMaxAge,
        [("Expires", -10), ("Cache-Control", "max-age=0, s-maxage=3600")], then: .cached),
      // cc-response
      .twoStep(
        "cc-resp-private-shared", dependsOn: [], [("Cache-Control", "private, max-age=3600")], pause: false,
        then: .notCached),
      // cc-stale
      ConformanceScenario(
        "stale-close-proxy-revalidate", dependsOn: ["stale-close"],
        [.stored([("Cache-Control", "max-age=2, proxy-revalidate")]), .droppedNotServed]),
      ConformanceScenario(
        "stale-close-s-maxage=2", dependsOn: ["stale-close"],
        [.stored([("Cache-Control", "max-age=2, s-maxage=2")]), .droppedNotServed]),
      // conditional-lm: the client's own If-Modified-Since
      ConformanceScenario(
        "conditional-lm-fresh", .optimal, dependsOn: maxAge,
        [.fresh(adding: [("Last-Modified", -3000)]), .notModified([("If-Modified-Since", -3000)], magicIMS: true)]),
      ConformanceScenario(
        "conditional-lm-fresh-earlier", .optimal, dependsOn: maxAge,
        [.fresh(adding: [("Last-Modified", -3000)]), .notModified([("If-Modified-Since", -2000)], magicIMS: true)]),
      ConformanceScenario(
        "conditional-lm-stale", .optimal, dependsOn: ["freshness-max-age-stale"],
        [
          .becomeStale.with { $0.responseHeaders += [("Last-Modified", -3000)] },
          ConformanceStep(
            requestHeaders: [("If-Modified-Since", -3000)], magicIMS: true, expect: .lmValidated, expectedStatus: 304),
        ]),
      ConformanceScenario(
        "conditional-lm-fresh-no-lm", .optimal, dependsOn: maxAge,
        [.fresh, .notModified([("If-Modified-Since", -3000)], magicIMS: true)]),
      ConformanceScenario(
        "conditional-lm-fresh-rfc850", .optimal, dependsOn: maxAge,
        [
          .fresh(adding: [("Last-Modified", -3000)]),
          .notModified([("If-Modified-Since", -3000)], magicIMS: true).with { $0.rfc850Dates = ["if-modified-since"] },
        ]),
      // conditional-inm: the client's own If-None-Match
      etag("\"abcdef\"", asked: "\"abcdef\"", "conditional-etag-strong-respond", .optimal, dependsOn: maxAge),
      ConformanceScenario(
        "conditional-304-etag", dependsOn: strong,
        [
          .fresh(adding: [("ETag", "\"abcdef\"")]),
          .notModified([("If-None-Match", "\"abcdef\"")]).with {
            $0.expectedResponseHeaders = [.equals("ETag", "\"abcdef\"")]
          },
        ]),
      ConformanceScenario(
        "conditional-etag-precedence", dependsOn: strong,
        [
          .fresh(adding: [("Last-Modified", -5000), ("ETag", "\"abcdef\"")]),
          .notModified([("If-None-Match", "\"abcdef\""), ("If-Modified-Since", -10000)], magicIMS: true),
        ]),
      ConformanceScenario(
        "conditional-etag-strong-respond-obs-text", .check, dependsOn: strong,
        [
          .fresh(adding: [("ETag", "\"abcdef\u{FC}\"")]),
          .notModified([("If-None-Match", "\"abcdef\u{FC}\"")]).with {
            $0.expectedResponseHeaders = [.equals("ETag", "\"abcdef\u{FC}\"")]
          },
        ]),
      etag("\"abcdef\"", asked: "abcdef", "conditional-etag-quoted-respond-unquoted", .check, dependsOn: strong),
      etag("abcdef", asked: "abcdef", "conditional-etag-unquoted-respond-unquoted", .check, dependsOn: strong),
      etag("abcdef", asked: "\"abcdef\"", "conditional-etag-unquoted-respond-quoted", .check, dependsOn: strong),
      etag("W/\"abcdef\"", asked: "W/\"abcdef\"", "conditional-etag-weak-respond", .optimal, dependsOn: maxAge),
      etag("w/\"abcdef\"", asked: "w/\"abcdef\"", "conditional-etag-weak-respond-lowercase", .check, dependsOn: weak),
      etag("W\\\"abcdef\"", asked: "W\\\"abcdef\"", "conditional-etag-weak-respond-backslash", .check, dependsOn: weak),
      etag("W\"abcdef\"", asked: "W\"abcdef\"", "conditional-etag-weak-respond-omit-slash", .check, dependsOn: weak),
      etag(
        "\"abcdef\"", asked: "\"abcdef\", \"1234\", \"5678\"", "conditional-etag-strong-respond-multiple-first",
        .optimal,
        dependsOn: strong),
      etag(
        "\"abcdef\"", asked: "\"1234\", \"abcdef\", \"5678\"", "conditional-etag-strong-respond-multiple-second",
        .optimal, dependsOn: strong),
      etag(
        "\"abcdef\"", asked: "\"1234\", \"5678\", \"abcdef\"", "conditional-etag-strong-respond-multiple-last",
        .optimal,
        dependsOn: strong),
      // authorization
      ConformanceScenario(
        "other-authorization", dependsOn: maxAge,
        [
          ConformanceStep.fresh.with {
            $0.requestHeaders = [("Authorization", "FOO")]
            $0.expectedRequestHeaders = [("Authorization", "FOO")]
          },
          .expecting(.notCached),
        ]),
      authenticated("other-authorization-public", "max-age=3600, public"),
      authenticated("other-authorization-must-revalidate", "max-age=3600, must-revalidate"),
      authenticated("other-authorization-smaxage", "s-maxage=3600"),
    ]
  }

  /// cc-stale scenarios in which the origin drops the connection.
  static var staleOnClose: [ConformanceScenario] {
    let stale = ["freshness-max-age-stale"]
    return [
      ConformanceScenario("stale-close", .check, dependsOn: stale, [.becomeStale, .droppedServedStale]),
      ConformanceScenario(
        "stale-sie-close", .check, dependsOn: stale,
        [.stored([("Cache-Control", "max-age=2, stale-if-error=60")]), .droppedServedStale]),
      ConformanceScenario(
        "stale-close-must-revalidate", dependsOn: ["stale-close"],
        [.stored([("Cache-Control", "max-age=2, must-revalidate")]), .droppedNotServed]),
      ConformanceScenario(
        "stale-close-no-cache", dependsOn: ["stale-close"],
        [.stored([("Cache-Control", "max-age=2, no-cache")]), .droppedNotServed]),
    ]
  }
}
