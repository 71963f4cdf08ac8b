// Scenarios of the suite's conditional-etag, headers, update304, invalidation, partial,
// cc-stale, method and other modules (conditional-lm and authorization have only shared-cache
// scenarios).
//
// Where the suite builds a request from a template and passes its own `response_headers` (or
// `request_headers`), the fields are appended to the template's (its `makeTemplate` merges
// arrays by concatenation, tests/lib/templates.mjs); the scenarios here do the same.

extension ConformanceStep {
  /// The `fresh` template with `headers` appended to its response fields.
  static func fresh(adding headers: [(String, ConformanceValue)]) -> ConformanceStep {
    fresh.with { $0.responseHeaders += headers }
  }
}

extension ConformanceSuite {
  static var conditional: [ConformanceScenario] {
    [
      ConformanceScenario(
        "conditional-etag-vary-headers",
        [
          .stored(
            [("Expires", 1), ("ETag", "\"abcdef\""), ("Date", 0), ("Vary", "Abc")], requestHeaders: [("Abc", "123")]),
          .expecting(.etagValidated, requestHeaders: [("Abc", "123")]).with {
            $0.expectedRequestHeaders = [("Abc", "123")]
          },
        ]),
      ConformanceScenario(
        "conditional-etag-vary-headers-mismatch", .check,
        dependsOn: ["conditional-etag-vary-headers", "vary-no-match"],
        [
          .stored(
            [("Expires", 10000), ("ETag", "\"abcdef\""), ("Date", 0), ("Vary", "Abc")],
            requestHeaders: [("Abc", "123")]),
          ConformanceStep(requestHeaders: [("Abc", "456")], expectedRequestHeaders: [("If-None-Match", "\"abcdef\"")]),
        ]),
      ConformanceScenario(
        "conditional-etag-strong-generate", .optimal, dependsOn: ["freshness-max-age-stale"],
        [
          ConformanceStep.becomeStale.with { $0.responseHeaders += [("ETag", "\"abcdef\"")] },
          ConformanceStep(expect: .etagValidated, expectedRequestHeaders: [("If-None-Match", "\"abcdef\"")]),
        ]),
      ConformanceScenario(
        "conditional-etag-weak-generate-weak", .optimal, dependsOn: ["freshness-max-age-stale"],
        [
          ConformanceStep.becomeStale.with { $0.responseHeaders += [("ETag", "W/\"abcdef\"")] },
          ConformanceStep(expect: .etagValidated, expectedRequestHeaders: [("If-None-Match", "W/\"abcdef\"")]),
        ]),
      ConformanceScenario(
        "conditional-etag-strong-generate-unquoted", .check, dependsOn: ["conditional-etag-strong-generate"],
        [
          ConformanceStep.becomeStale.with { $0.responseHeaders += [("ETag", "abcdef")] },
          ConformanceStep(expect: .etagValidated, expectedRequestHeaders: [("If-None-Match", "\"abcdef\"")]),
        ]),
      ConformanceScenario(
        "conditional-etag-forward", .check,
        [
          ConformanceStep(
            requestHeaders: [("If-None-Match", "\"abcdef\"")], expectedRequestHeaders: [("If-None-Match", "\"abcdef\"")]
          )
        ]),
      ConformanceScenario(
        "conditional-etag-forward-unquoted", .check, dependsOn: ["conditional-etag-forward"],
        [
          ConformanceStep(
            requestHeaders: [("If-None-Match", "abcdef")], expectedRequestHeaders: [("If-None-Match", "\"abcdef\"")])
        ]),
    ]
  }

  /// The header fields the suite's headers and update304 modules try: name, the first and
  /// second value, and how the field must be treated.
  private enum FieldRule { case mustUpdate, mayUpdate, mustNotUpdate, mustNotStore }

  private static let fieldList: [(name: String, a: String?, b: String?, rule: FieldRule)] = [
    ("Test-Header", nil, nil, .mustUpdate), ("X-Test-Header", nil, nil, .mustUpdate),
    ("Content-Foo", nil, nil, .mustUpdate), ("X-Content-Foo", nil, nil, .mustUpdate),
    ("Cache-Control", "max-age=1", "max-age=3600", .mustUpdate), ("Connection", nil, nil, .mustNotStore),
    ("Content-Encoding", nil, nil, .mayUpdate), ("Content-Length", "36", "10", .mustNotUpdate),
    ("Content-Location", "/foo", "/bar", .mayUpdate),
    ("Content-MD5", "rL0Y20zC+Fzt72VPzMSk2A==", "N7UdGUp1E+RbVvZSTy1R8g==", .mayUpdate),
    ("Content-Range", nil, nil, .mayUpdate),
    ("Content-Security-Policy", "default-src 'self'", "default-src 'self' cdn.example.com", .mayUpdate),
    ("Content-Type", "text/plain", "text/plain;charset=utf-8", .mayUpdate),
    ("Clear-Site-Data", "cache", "cookies", .mayUpdate), ("ETag", "\"abcdef\"", "\"ghijkl\"", .mayUpdate),
    ("Expires", "Fri, 01 Jan 2038 01:01:01 GMT", "Mon, 11 Jan 2038 11:11:11 GMT", .mayUpdate),
    ("Keep-Alive", nil, nil, .mustNotStore), ("Proxy-Authenticate", nil, nil, .mustNotStore),
    ("Proxy-Authentication-Info", nil, nil, .mustNotStore), ("Proxy-Authorization", nil, nil, .mustNotStore),
    ("Proxy-Connection", nil, nil, .mustNotStore), ("Public-Key-Pins", nil, nil, .mayUpdate),
    ("Set-Cookie", "a=b", "a=c", .mayUpdate), ("Set-Cookie2", "a=b", "a=c", .mayUpdate),
    ("TE", nil, nil, .mustNotStore), ("Transfer-Encoding", nil, nil, .mustNotStore),
    ("Upgrade", nil, nil, .mustNotStore), ("X-Frame-Options", "deny", "sameorigin", .mayUpdate),
    ("X-XSS-Protection", "1", "1; mode=block", .mayUpdate),
  ]

  static var headers: [ConformanceScenario] {
    var scenarios: [ConformanceScenario] = [
      ConformanceScenario(
        "headers-omit-headers-listed-in-Connection", dependsOn: ["freshness-max-age"],
        [
          .fresh(adding: [
            ("Connection", .unrecorded("a, b")), ("a", .unrecorded("1")), ("b", .unrecorded("2")),
            ("c", .unrecorded("3")),
          ]),
          ConformanceStep(
            expect: .cached, expectedResponseHeaders: [.equals("c", "3")],
            missingResponseHeaders: [("a", nil), ("b", nil)]),
        ])
    ]
    for field in fieldList {
      let value = field.b ?? httpContent("\(field.name)-store-value")
      let stores = field.rule != .mustNotStore
      // A body as long as the `Content-Length` under test: the server frames by the real length
      // (upstream sends its 36-byte default body; see ConformanceUpstreamTests.deviations).
      let body: String? = field.name == "Content-Length" ? String("0123456789".prefix(Int(value) ?? 0)) : nil
      var headers: [(String, ConformanceValue)] = [
        ("Date", 0), (field.name, stores ? .text(value) : .unrecorded(value)),
      ]
      if field.name != "Cache-Control" { headers.append(("Cache-Control", "max-age=3600")) }
      scenarios.append(
        ConformanceScenario(
          "headers-store-\(field.name)", dependsOn: ["freshness-max-age"],
          [
            .stored(headers, body: body),
            ConformanceStep(
              responseBody: body, expect: .cached,
              expectedResponseHeaders: stores ? [.equals(field.name, .text(value))] : [],
              missingResponseHeaders: stores ? [] : [(field.name, value)]),
          ]))
    }
    return scenarios
  }

  static var update304: [ConformanceScenario] {
    let lastModified = "Wed, 01 Jan 2020 00:00:00 GMT"
    var scenarios: [ConformanceScenario] = [
      ConformanceScenario(
        "304-lm-use-stored-Test-Header",
        [
          .stored([
            ("Cache-Control", "max-age=2"), ("Last-Modified", .text(lastModified)), ("Date", 0),
            ("Test-Header", .text(httpContent("Test-Header-value-A"))),
          ]),
          ConformanceStep(
            responseHeaders: [("Last-Modified", .text(lastModified)), ("Date", 0)], expect: .lmValidated,
            expectedResponseHeaders: [.equals("Test-Header", .text(httpContent("Test-Header-value-A")))]),
        ])
    ]
    for field in fieldList where field.rule != .mustNotStore {
      let a = field.a ?? httpContent("\(field.name)-value-A")
      let b = field.b ?? httpContent("\(field.name)-value-B")
      let expected = field.rule == .mustNotUpdate ? a : b
      let kind: ConformanceKind = field.rule == .mayUpdate ? .check : .required
      let etag = "\"\(httpContent("\(field.name)-etag-1"))\""
      func response(_ value: String, validator: Bool) -> [(String, ConformanceValue)] {
        var headers: [(String, ConformanceValue)] = [
          ("Date", 0), (field.name, field.rule == .mustNotUpdate ? .unrecorded(value) : .text(value)),
        ]
        if field.name != "Cache-Control" { headers.append(("Cache-Control", "max-age=2")) }
        if validator && field.name != "ETag" { headers.append(("ETag", .text(etag))) }
        return headers
      }
      // The stored `Content-Length` (36) is the length of the default body, the scenario's
      // 36-character identifier, as upstream's.
      let body: String? = nil
      scenarios.append(
        ConformanceScenario(
          "304-etag-update-response-\(field.name)", kind, dependsOn: ["304-lm-use-stored-Test-Header"],
          [
            .stored(response(a, validator: true), body: body),
            ConformanceStep(
              responseHeaders: response(b, validator: true), responseBody: body, expect: .etagValidated,
              expectedResponseHeaders: [.equals(field.name, .text(expected))]),
            ConformanceStep(
              responseHeaders: response(expected, validator: false), responseBody: body, expect: .cached,
              expectedResponseHeaders: [.equals(field.name, .text(expected))]),
          ]))
    }
    return scenarios
  }

  static var invalidation: [ConformanceScenario] {
    let lasting: [(String, ConformanceValue)] = [
      ("Cache-Control", "max-age=100000"), ("Last-Modified", 0), ("Date", 0),
    ]
    var scenarios: [ConformanceScenario] = []
    for method in ["POST", "PUT", "DELETE", "M-SEARCH"] {
      let unsafe = ConformanceStep(method: method, requestBody: "abc", setup: true)
      scenarios.append(
        ConformanceScenario(
          "invalidate-\(method)", dependsOn: ["freshness-max-age"], [.fresh, unsafe, .expecting(.notCached)]))
      scenarios.append(
        ConformanceScenario(
          "invalidate-\(method)-failed", .optimal, dependsOn: ["invalidate-\(method)"],
          [.fresh, unsafe.with { $0.status = 500 }, .expecting(.cached)]))
      let locating = unsafe.with {
        $0.responseHeaders = [("Location", "location_target"), ("Content-Location", "content_location_target")]
        $0.magicLocations = true
      }
      for (suffix, file) in [("location", "location_target"), ("cl", "content_location_target")] {
        let target = ConformanceStep(filename: file, responseHeaders: lasting)
        scenarios.append(
          ConformanceScenario(
            "invalidate-\(method)-\(suffix)", .check, dependsOn: ["invalidate-\(method)"],
            [target.with { $0.setup = true }, locating, target.with { $0.expect = .notCached }]))
      }
    }
    return scenarios
  }

  static var partial: [ConformanceScenario] {
    func range(_ value: String, text: String) -> ConformanceStep {
      ConformanceStep(
        requestHeaders: [("Range", .text(value))], expect: .cached, expectedStatus: 206, expectedBody: .some(text))
    }
    let partial = ConformanceStep(
      requestHeaders: [("Range", "bytes=-5")], status: 206,
      responseHeaders: [("Cache-Control", "max-age=3600"), ("Content-Range", "bytes 4-9/10")], responseBody: "01234",
      setup: true)
    func complete(_ body: String, extra: [(String, ConformanceValue)] = []) -> ConformanceStep {
      .stored([("Cache-Control", "max-age=3600")] + extra, body: body, pause: false)
    }
    let maxAge = ["freshness-max-age"]
    return [
      ConformanceScenario(
        "partial-store-partial-reuse-partial", .optimal, dependsOn: maxAge,
        [partial.with { $0.expectedRequestHeaders = [("Range", "bytes=-5")] }, range("bytes=-5", text: "01234")]),
      ConformanceScenario(
        "partial-store-complete-reuse-partial", .optimal, dependsOn: maxAge,
        [complete("01234567890"), range("bytes=0-1", text: "01")]),
      ConformanceScenario(
        "partial-store-complete-reuse-partial-no-last", .optimal, dependsOn: maxAge,
        [complete("01234567890"), range("bytes=1-", text: "1234567890")]),
      ConformanceScenario(
        "partial-store-complete-reuse-partial-suffix", .optimal, dependsOn: maxAge,
        [complete("0123456789A"), range("bytes=-1", text: "A")]),
      ConformanceScenario(
        "partial-store-partial-reuse-partial-byterange", .optimal, dependsOn: maxAge,
        [partial, range("bytes=6-8", text: "234")]),
      ConformanceScenario(
        "partial-store-partial-reuse-partial-absent", .optimal, dependsOn: maxAge,
        [partial, range("bytes=6-", text: "234")]),
      ConformanceScenario(
        "partial-store-partial-reuse-partial-suffix", .optimal, dependsOn: maxAge,
        [partial, range("bytes=-1", text: "4")]),
      ConformanceScenario(
        "partial-store-partial-complete", .optimal, dependsOn: maxAge,
        [
          partial.with { $0.responseHeaders[1] = ("Content-Range", "bytes 0-4/10") },
          ConformanceStep(expectedRequestHeaders: [("range", "bytes=5-")]),
        ]),
      ConformanceScenario(
        "partial-use-headers", dependsOn: ["partial-store-complete-reuse-partial"],
        [
          complete("01234567890", extra: [("A", "1")]),
          range("bytes=0-1", text: "01").with { $0.responseHeaders = [("A", "2")] },
        ]),
      ConformanceScenario(
        "partial-use-stored-headers", dependsOn: ["partial-store-complete-reuse-partial"],
        [
          complete("01234567890", extra: [("A", "1")]),
          range("bytes=0-1", text: "01").with { $0.expectedResponseHeaders = [.equals("A", "1")] },
        ]),
    ]
  }

  static var staleExtensions: [ConformanceScenario] {
    let stale = ["freshness-max-age-stale"]
    return [
      ConformanceScenario(
        "stale-while-revalidate", .optimal, dependsOn: stale,
        [
          .stored([("Cache-Control", "max-age=1, stale-while-revalidate=3600"), ("ETag", "\"abc\"")]),
          .expecting(.cached),
        ]),
      // Served stale at 3 s and revalidated in the background: the revalidation's answer says
      // no-cache, so the third request goes to the origin.
      ConformanceScenario(
        "stale-while-revalidate-window", dependsOn: ["stale-while-revalidate"],
        [
          .stored([("Cache-Control", "max-age=1, stale-while-revalidate=4"), ("ETag", "\"abc\"")]),
          ConformanceStep(
            responseHeaders: [("Cache-Control", .unrecorded("no-cache")), ("ETag", .unrecorded("\"def\""))],
            setup: true, pause: true, expect: .cached),
          ConformanceStep(expectedResponseHeaders: [.equals("Client-Request-Count", "3")]),
        ]),
      ConformanceScenario(
        "stale-503", .check, dependsOn: stale,
        [.becomeStale, ConformanceStep(status: 503, expect: .cached, expectedStatus: 200)]),
      ConformanceScenario(
        "stale-sie-503", .check, dependsOn: stale,
        [
          .stored([("Cache-Control", "max-age=2, stale-if-error=60")]),
          ConformanceStep(status: 503, expect: .cached, expectedStatus: 200),
        ]),
      ConformanceScenario(
        "stale-warning-stored", .check, dependsOn: ["stale-close"],
        [.stale, ConformanceStep.droppedServedStale.with { $0.expectedResponseHeaders = [.present("Warning")] }]),
      ConformanceScenario(
        "stale-warning-become", .check, dependsOn: ["stale-close"],
        [.becomeStale, ConformanceStep.droppedServedStale.with { $0.expectedResponseHeaders = [.present("Warning")] }]),
    ]
  }

  /// The updateHead module: a `HEAD` goes to the origin and its answer may freshen or update
  /// the stored `GET` response (checks).
  static var updateHead: [ConformanceScenario] {
    let head = ConformanceStep(method: "HEAD", expectedMethod: "HEAD")
    return [
      ConformanceScenario("head-writethrough", .check, dependsOn: ["freshness-max-age-stale"], [.becomeStale, head]),
      ConformanceScenario(
        "head-200-retain", .check, dependsOn: ["head-writethrough"],
        [.becomeStale, head.with { $0.expectedResponseHeaders = [.equals("Template-A", "1")] }]),
      ConformanceScenario(
        "head-200-freshness-update", .check, dependsOn: ["head-writethrough"],
        [.becomeStale, head.with { $0.responseHeaders = [("Cache-Control", "max-age=1000")] }, .expecting(.cached)]),
      ConformanceScenario(
        "head-200-update", .check, dependsOn: ["head-200-freshness-update"],
        [
          .becomeStale, head.with { $0.responseHeaders = [("Template-A", "2"), ("Cache-Control", "max-age=1000")] },
          ConformanceStep(expect: .cached, expectedResponseHeaders: [.equals("Template-A", "2")]),
        ]),
      ConformanceScenario(
        "head-410-update", .check, dependsOn: ["head-200-freshness-update"],
        [
          .becomeStale,
          head.with {
            $0.status = 410
            $0.responseHeaders = [("Template-A", "2"), ("Cache-Control", "max-age=1000")]
          },
          ConformanceStep(expect: .cached, expectedResponseHeaders: [.equals("Template-A", "2")]),
        ]),
    ]
  }

  /// Kiln's own stale-if-error scenarios (RFC 5861 §4 in a response and in a request), in the
  /// suite's form but not upstream's: run beside the suite, never counted in its figures.
  static var kilnStaleIfError: [ConformanceScenario] {
    [
      ConformanceScenario(
        "kiln-stale-if-error-cc-response", .check,
        [
          .stored([("Cache-Control", "max-age=0, stale-if-error=3600")], pause: false),
          ConformanceStep(status: 500, expectedStatus: 200),
        ]),
      ConformanceScenario(
        "kiln-stale-if-error-cc-response-expired",
        [.stored([("Cache-Control", "max-age=0, stale-if-error=1")]), ConformanceStep(status: 500)]),
      ConformanceScenario(
        "kiln-stale-if-error-cc-request", .check,
        [
          .stored([("Cache-Control", "max-age=0")], pause: false),
          ConformanceStep(requestHeaders: [("Cache-Control", "stale-if-error=3600")], status: 500, expectedStatus: 200),
        ]),
      ConformanceScenario(
        "kiln-stale-if-error-cc-request-expired",
        [
          .stored([("Cache-Control", "max-age=0")]),
          ConformanceStep(requestHeaders: [("Cache-Control", "stale-if-error=1")], status: 500),
        ]),
    ]
  }

  static var other: [ConformanceScenario] {
    let maxAge = ["freshness-max-age"]
    let future = ["freshness-expires-future"]
    let expiring: [(String, ConformanceValue)] = [("Expires", .delta(30 * 24 * 60 * 60)), ("Date", 0)]
    return [
      ConformanceScenario(
        "method-POST", .optimal,
        [
          ConformanceStep(
            method: "POST", requestHeaders: [("Content-Type", "text/plain")], requestBody: "12345",
            responseHeaders: [("Cache-Control", "max-age=3600"), ("Content-Location", ""), ("Date", 0)],
            magicLocations: true, setup: true, pause: true),
          .expecting(.cached),
        ]),
      ConformanceScenario(
        "other-age-delay", .check,
        [
          ConformanceStep(
            responseHeaders: [("Cache-Control", "max-age=3600"), ("Date", 0)], responsePause: 5,
            expectedResponseHeaders: [.greaterThan("Age", 0)])
        ]),
      ConformanceScenario(
        "other-age-gen", dependsOn: maxAge,
        [.fresh, ConformanceStep(expect: .cached, expectedResponseHeaders: [.greaterThan("Age", 2)])]),
      ConformanceScenario(
        "other-age-update-expires", dependsOn: future,
        [
          .stored(expiring + [("Age", "30")]),
          ConformanceStep(expect: .cached, expectedResponseHeaders: [.greaterThan("Age", 32)]),
        ]),
      ConformanceScenario(
        "other-age-update-max-age", dependsOn: maxAge,
        [
          .fresh(adding: [("Age", "30")]),
          ConformanceStep(expect: .cached, expectedResponseHeaders: [.greaterThan("Age", 32)]),
        ]),
      ConformanceScenario(
        "other-date-update", dependsOn: maxAge,
        [.fresh, ConformanceStep(expect: .cached, expectedResponseHeaders: [.equals("Date", 0)])]),
      ConformanceScenario(
        "other-date-update-expires", dependsOn: future,
        [.stored(expiring), ConformanceStep(expect: .cached, expectedResponseHeaders: [.equals("Date", 0)])]),
      ConformanceScenario(
        "other-date-update-expires-update", .check, dependsOn: future,
        [
          .stored(expiring),
          ConformanceStep(expect: .cached, expectedResponseHeaders: [.equals("Expires", .delta(30 * 24 * 60 * 60))]),
        ]),
      ConformanceScenario(
        "query-args-different", dependsOn: maxAge,
        [
          ConformanceStep.fresh.with { $0.query = "test=" + httpContent("query-args-different-1") },
          ConformanceStep(query: "test=" + httpContent("query-args-different-2"), expect: .notCached),
        ]),
      ConformanceScenario(
        "query-args-same", .optimal, dependsOn: maxAge,
        [
          ConformanceStep.fresh.with { $0.query = "test=" + httpContent("query-args-same") },
          ConformanceStep(query: "test=" + httpContent("query-args-same"), expect: .cached),
        ]),
      .twoStep(
        "other-heuristic-content-disposition-attachment", .check, dependsOn: ["heuristic-200-cached"],
        [("Last-Modified", -100_000), ("Date", 0), ("Content-Disposition", "attachment; filename=example.txt")],
        pause: false, then: .cached),
      ConformanceScenario(
        "other-fresh-content-disposition-attachment", .check, dependsOn: maxAge,
        [.fresh(adding: [("Content-Disposition", "attachment; filename=example.txt")]), .expecting(.cached)]),
      ConformanceScenario(
        "other-set-cookie", .optimal, dependsOn: maxAge,
        [.fresh(adding: [("Set-Cookie", "a=b")]), .expecting(.cached)]),
      ConformanceScenario(
        "other-cookie", .optimal, dependsOn: maxAge, [.fresh, .expecting(.cached, requestHeaders: [("Cookie", "a=b")])]),
    ]
  }
}
