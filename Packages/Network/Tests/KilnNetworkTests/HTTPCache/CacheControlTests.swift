import Foundation
import KilnNetwork
import Testing

@Suite("CacheControl")
struct CacheControlTests {
  @Test("directive names are case-insensitive and every field line counts")
  func caseAndLines() {
    var headers: HTTPHeaders = ["Cache-Control": "Max-Age=60, PUBLIC"]
    headers.add("Must-Revalidate", for: "cache-control")
    let directives = CacheControl(headers)
    #expect(directives.maxAge == 60)
    #expect(directives.isPublic)
    #expect(directives.mustRevalidate)
    #expect(!directives.isPrivate)
    #expect(directives.contains("must-revalidate"))
    #expect(directives.directives.map(\.name) == ["max-age", "public", "must-revalidate"])
  }

  @Test("quoted arguments mean the same as tokens, and commas inside quotes do not split")
  func quotedValues() {
    let directives = CacheControl(parsing: #"max-age="60", no-cache="Set-Cookie, Age", s-maxage="5""#)
    #expect(directives.maxAge == 60)
    #expect(directives.sharedMaxAge == 5)
    #expect(!directives.noCache)
    #expect(directives.noCacheFields == ["set-cookie", "age"])
    #expect(directives.directives.first { $0.name == "no-cache" }?.argument == "Set-Cookie, Age")
    let qualifiedPrivate = CacheControl(parsing: #"private="X-User", no-cache"#)
    #expect(!qualifiedPrivate.isPrivate && qualifiedPrivate.privateFields == ["x-user"] && qualifiedPrivate.noCache)
  }

  @Test("bytes outside ASCII: extensions keep them whole, escapes and OWS around them are read as octets")
  func nonASCII() {
    // Tabs and spaces trimmed next to multi-byte characters; an escaped quote inside a quoted
    // argument, followed by a multi-byte character, does not end it.
    let directives = CacheControl(parsing: "\tx-émoji=\"🔥, \\\"ü\" ,max-age=7, x-tail=ä\t")
    #expect(directives.maxAge == 7)
    #expect(directives.directives.map(\.name) == ["x-émoji", "max-age", "x-tail"])
    #expect(directives.directives.first?.argument == "🔥, \"ü")
    #expect(directives.directives.last?.argument == "ä")
    // A comma followed by a combining mark is a comma: the grammar is written in octets.
    let combining = CacheControl(parsing: "no-store,\u{301}x-mark")
    #expect(combining.noStore)
    #expect(combining.directives.map(\.name) == ["no-store", "\u{301}x-mark"])
    // A quote followed by a combining mark opens and closes a quoted argument all the same
    // (the fuzzer's finding: the split read it as a quote, the unquoting did not).
    let quoted = CacheControl(parsing: "private=\"\u{7AC}x, y\u{301}\", max-age=3")
    #expect(quoted.directives.map(\.name) == ["private", "max-age"])
    #expect(quoted.directives.first?.argument == "\u{7AC}x, y\u{301}")
    #expect(quoted.privateFields == ["\u{7AC}x", "y\u{301}"])
  }

  @Test("a directive given twice keeps its first value, across field lines too")
  func duplicates() {
    #expect(CacheControl(parsing: "max-age=60, max-age=1").maxAge == 60)
    #expect(CacheControl(parsing: "max-age=1, max-age=60").maxAge == 1)
    var headers: HTTPHeaders = ["Cache-Control": "stale-if-error=10"]
    headers.add("stale-if-error=99", for: "Cache-Control")
    #expect(CacheControl(headers).staleIfError == 10)
  }

  @Test(
    "an invalid max-age or s-maxage counts as 0 (stale)",
    arguments: ["max-age=-1", "max-age=abc", "max-age=", "max-age", "max-age=1.5", "max-age=\"\"", "max-age=0x10"])
  func invalidMaxAge(value: String) {
    #expect(CacheControl(parsing: value).maxAge == 0)
    #expect(CacheControl(parsing: "s-" + value.replacingOccurrences(of: "max-age", with: "maxage")).sharedMaxAge == 0)
  }

  @Test("whitespace around = is not in the grammar: another directive name, or an invalid argument")
  func whitespaceAroundEquals() {
    #expect(CacheControl(parsing: "max-age =3600").maxAge == nil)
    #expect(CacheControl(parsing: "max-age =3600").contains("max-age ") == true)
    #expect(CacheControl(parsing: "max-age= 3600").maxAge == 0)
    #expect(CacheControl(parsing: "max-age=003600").maxAge == 3600)
    #expect(CacheControl(parsing: "max-age='3600'").maxAge == 0)
    #expect(CacheControl(parsing: #"extension="max-age=3600", max-age=1"#).maxAge == 1)
  }

  @Test("invalid stale-while-revalidate, stale-if-error and min-fresh are ignored")
  func invalidExtensions() {
    let directives = CacheControl(parsing: "stale-while-revalidate=-5, stale-if-error=x, min-fresh=")
    #expect(directives.staleWhileRevalidate == nil)
    #expect(directives.staleIfError == nil)
    #expect(directives.minFresh == nil)
  }

  @Test("delta-seconds beyond 2^31 are clamped to 2^31")
  func overflow() {
    #expect(CacheControl(parsing: "max-age=99999999999999999999999999").maxAge == 2_147_483_648)
    #expect(CacheControl(parsing: "max-age=2147483649").maxAge == 2_147_483_648)
    #expect(CacheControl(parsing: "max-age=2147483647").maxAge == 2_147_483_647)
  }

  @Test("max-stale without a value accepts any staleness; with one, that many seconds")
  func maxStale() {
    #expect(CacheControl(parsing: "max-stale").maxStale == CacheControl.maximumDeltaSeconds)
    #expect(CacheControl(parsing: "max-stale=30").maxStale == 30)
    #expect(CacheControl(parsing: "max-stale=abc").maxStale == nil)
  }

  @Test("every standard directive is recognised; unknown ones are kept but change nothing")
  func allDirectives() {
    let directives = CacheControl(
      parsing: "no-store, no-transform, only-if-cached, proxy-revalidate, must-understand, private, immutable, "
        + "min-fresh=7, stale-while-revalidate=8, stale-if-error=9, community=\"UCI\"")
    #expect(directives.noStore && directives.noTransform && directives.onlyIfCached)
    #expect(directives.proxyRevalidate && directives.mustUnderstand && directives.isPrivate && directives.immutable)
    #expect(directives.minFresh == 7 && directives.staleWhileRevalidate == 8 && directives.staleIfError == 9)
    #expect(directives.contains("community"))
    #expect(directives.directives.last?.argument == "UCI")
  }

  @Test("empty elements, stray commas and no field at all parse to nothing")
  func empty() {
    #expect(CacheControl(parsing: " , ,, ").isEmpty)
    #expect(CacheControl(HTTPHeaders()).isEmpty)
    #expect(CacheControl(HTTPHeaders()) == CacheControl())
    #expect(CacheControl(parsing: "=5").isEmpty)
  }
}
