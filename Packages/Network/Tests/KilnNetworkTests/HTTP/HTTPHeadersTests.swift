import Foundation
import KilnNetwork
import Testing

@Suite("HTTPHeaders")
struct HTTPHeadersTests {
  @Test("names compare without regard to ASCII case, values are comma-joined in order")
  func caseInsensitiveNames() {
    var headers: HTTPHeaders = ["Cache-Control": "max-age=60"]
    headers.add("public", for: "cache-control")
    #expect(headers["CACHE-CONTROL"] == "max-age=60, public")
    #expect(headers.values(for: "Cache-control") == ["max-age=60", "public"])
    #expect(headers.first("cache-CONTROL") == "max-age=60")
    #expect(headers.contains("cache-control"))
    #expect(!headers.contains("Cache"))
    #expect(headers["Missing"] == nil)
  }

  @Test("setting replaces every field of the name in place; nil removes them all")
  func setAndRemove() {
    var headers = HTTPHeaders([("A", "1"), ("B", "2"), ("a", "3"), ("C", "4")])
    headers["a"] = "9"
    #expect(headers.fields.map(\.description) == ["a: 9", "B: 2", "C: 4"])
    headers["B"] = nil
    #expect(headers.fields.map(\.description) == ["a: 9", "C: 4"])
    headers.set("5", for: "D")
    #expect(headers.fields.map(\.description) == ["a: 9", "C: 4", "D: 5"])
  }

  @Test("values are trimmed of spaces and tabs; list elements split outside quotes only")
  func listElements() {
    let headers = HTTPHeaders([
      ("Vary", " Accept ,\taccept-encoding "), ("vary", ""), ("Cache-Control", #"no-cache="a, b", max-age=5,,"#),
    ])
    #expect(headers.values(for: "vary") == ["Accept ,\taccept-encoding", ""])
    #expect(headers.listElements(for: "Vary") == ["Accept", "accept-encoding"])
    #expect(headers.listElements(for: "cache-control") == [#"no-cache="a, b""#, "max-age=5"])
  }

  @Test("replaceFields(with:) replaces the fields it names and keeps the others (a 304 merge)")
  func replaceFields() {
    var stored = HTTPHeaders([("ETag", "\"1\""), ("Cache-Control", "max-age=1"), ("X-Old", "kept")])
    stored.replaceFields(with: HTTPHeaders([("cache-control", "max-age=60"), ("Cache-Control", "public")]))
    #expect(stored["X-Old"] == "kept")
    #expect(stored["ETag"] == "\"1\"")
    #expect(stored.values(for: "Cache-Control") == ["max-age=60", "public"])
  }

  @Test("dictionary joins repeated names under the first spelling")
  func dictionary() {
    let headers = HTTPHeaders([("Accept", "a"), ("accept", "b"), ("Host", "h")])
    #expect(headers.dictionary == ["Accept": "a, b", "Host": "h"])
  }

  @Test("the standard methods know whether they are safe and idempotent; custom ones are neither")
  func methods() {
    #expect([HTTPMethod.get, .head, .options, .trace].allSatisfy { $0.isSafe && $0.isIdempotent })
    #expect([HTTPMethod.put, .delete].allSatisfy { !$0.isSafe && $0.isIdempotent })
    #expect([HTTPMethod.post, .patch, .connect, "PURGE", "get"].allSatisfy { !$0.isSafe && !$0.isIdempotent })
    #expect(HTTPMethod("PURGE").rawValue == "PURGE")
  }
}

@Suite("HTTPDate")
struct HTTPDateTests {
  static let reference = Date(timeIntervalSince1970: 784_111_777)

  @Test(
    "all three forms of RFC 9110 parse to the same instant",
    arguments: ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"]
  )
  func threeForms(text: String) {
    #expect(HTTPDate.parse(text) == Self.reference)
    #expect(HTTPDate.parse("  \(text) ") == Self.reference)
  }

  @Test(
    "month and zone names are read in any case, as RFC 9111 §4.2 asks of a cache",
    arguments: [
      "Sun, 06 nov 1994 08:49:37 GMT", "Sun, 06 NOV 1994 08:49:37 gmt", "sunday, 06-nOv-94 08:49:37 Gmt",
      "sun NOV  6 08:49:37 1994",
    ]
  )
  func anyCase(text: String) {
    #expect(HTTPDate.parse(text) == Self.reference)
  }

  @Test(
    "anything else is not a date",
    arguments: [
      "", "0", "-1", "Sun, 06 Nov 1994 08:49:37", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 6 Nov 1994 08:49:37 GMT",
      "Sun, 06 Nvo 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMX", "Sun, 31 Feb 1994 08:49:37 GMT",
      "Sun, 06 Nov 1994 24:00:00 GMT",
      "Sun, 06 Nov 1994 08:49:37 GMT trailing", "Sunday, 06 Nov 1994 08:49:37 GMT", "Sun Nov 6 08:49:37 1994",
      "Sun, 06 Nov 1994 08:49:37 GMT\u{0}", "😀, 06 Nov 1994 08:49:37 GMT",
    ]
  )
  func invalid(text: String) {
    #expect(HTTPDate.parse(text) == nil)
  }

  @Test("formatting clamps dates a four-digit year cannot hold and never traps on NaN")
  func formattingOutOfRange() {
    #expect(HTTPDate.format(Date(timeIntervalSince1970: .nan)) == "Thu, 01 Jan 1970 00:00:00 GMT")
    #expect(HTTPDate.format(Date(timeIntervalSince1970: .infinity)) == "Fri, 31 Dec 9999 23:59:59 GMT")
    #expect(HTTPDate.format(Date(timeIntervalSince1970: -.infinity)) == "Sat, 01 Jan 0000 00:00:00 GMT")
    #expect(HTTPDate.format(Date(timeIntervalSince1970: -1e300)) == "Sat, 01 Jan 0000 00:00:00 GMT")
    // The clamped ends parse back, like every date the form can write.
    for edge in [-62_167_219_200, 253_402_300_799] as [TimeInterval] {
      let date = Date(timeIntervalSince1970: edge)
      #expect(HTTPDate.parse(HTTPDate.format(date)) == date)
    }
    #expect(HTTPDate.format(.distantFuture) == "Mon, 01 Jan 4001 00:00:00 GMT")
    #expect(HTTPDate.format(Date(timeIntervalSince1970: 1e300)) == "Fri, 31 Dec 9999 23:59:59 GMT")
  }

  @Test("formatting gives IMF-fixdate and round-trips through parsing")
  func formatting() {
    #expect(HTTPDate.format(Self.reference) == "Sun, 06 Nov 1994 08:49:37 GMT")
    #expect(HTTPDate.format(Date(timeIntervalSince1970: 0)) == "Thu, 01 Jan 1970 00:00:00 GMT")
    #expect(HTTPDate.format(Date(timeIntervalSince1970: 951_782_400)) == "Tue, 29 Feb 2000 00:00:00 GMT")
    for seconds in stride(from: -2_000_000_000, through: 4_000_000_000, by: 86_399 * 37) {
      let date = Date(timeIntervalSince1970: TimeInterval(seconds))
      #expect(HTTPDate.parse(HTTPDate.format(date)) == date)
    }
  }

  @Test("a leap day exists only in leap years")
  func leapDays() {
    #expect(HTTPDate.parse("Tue, 29 Feb 2000 00:00:00 GMT") != nil)
    #expect(HTTPDate.parse("Thu, 29 Feb 1900 00:00:00 GMT") == nil)
    #expect(HTTPDate.parse("Mon, 29 Feb 2021 00:00:00 GMT") == nil)
  }
}
