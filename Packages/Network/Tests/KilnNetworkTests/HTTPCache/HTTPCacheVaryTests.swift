import Foundation
import Testing

@testable import KilnNetwork

/// Two requests select the same stored response when the fields it varies on are equal once
/// normalised (RFC 9111 §4.1): lines combined, whitespace dropped where the syntax allows it,
/// and for the `Accept` family, case and order ignored.
@Suite("HTTPCache Vary normalisation")
struct HTTPCacheVaryTests {
  func stored(varyingOn name: String, _ value: String) -> StoredHTTPResponse {
    storedResponse(["Cache-Control": "max-age=60", "Vary": name], request: getRequest([name: value]))
  }

  @Test(
    "Accept-Language in another order, case or spacing selects the same response",
    arguments: ["de, en", "eN, De", " en ,   de", "en,de", "DE,EN"])
  func acceptLanguage(value: String) {
    #expect(stored(varyingOn: "Accept-Language", "en, de").matchesVary(of: getRequest(["Accept-Language": value])))
  }

  @Test("other Accept-Language values, and q parameters that differ, select another response")
  func acceptLanguageDiffers() {
    let stored = stored(varyingOn: "Accept-Language", "en, de")
    #expect(!stored.matchesVary(of: getRequest(["Accept-Language": "en"])))
    #expect(!stored.matchesVary(of: getRequest(["Accept-Language": "en, fr"])))
    let weighted = self.stored(varyingOn: "Accept-Language", "en;q=0.5, de")
    #expect(weighted.matchesVary(of: getRequest(["Accept-Language": "de, EN ; q = 0.5"])))
    #expect(!weighted.matchesVary(of: getRequest(["Accept-Language": "de, en;q=0.6"])))
  }

  @Test("another Accept-Language whose most preferred range selects the stored Content-Language matches it")
  func acceptLanguageSelectsContentLanguage() {
    func stored(_ language: String) -> StoredHTTPResponse {
      storedResponse(
        ["Cache-Control": "max-age=60", "Vary": "Accept-Language", "Content-Language": language],
        request: getRequest(["Accept-Language": "en, de"]))
    }
    let german = stored("de")
    func selects(_ stored: StoredHTTPResponse, _ value: String) -> Bool {
      stored.matchesVary(of: getRequest(["Accept-Language": value]), selectingLanguage: true)
    }
    for value in ["fr;q=0.5, de;q=1.0", "de", "DE;q=0.9, fr;q=0.2", "de, fr;q=0.9"] {
      #expect(selects(german, value), "\(value)")
      #expect(!german.matchesVary(of: getRequest(["Accept-Language": value])), "exact matching stays exact: \(value)")
    }
    #expect(selects(stored("de-AT"), "de, fr;q=0.5"), "de selects de-AT")
    for value in [
      "de, fr", "fr, de",  // a tie at the top: the origin chooses
      "fr, de;q=0.9",  // fr is preferred
      "de-CH",  // a narrower range does not select de
      "*",  // any language: the origin might choose another
      "de;q=0",  // not acceptable
      "de;q=2",  // an invalid weight
      "fr;q=0.5, de;q=0.5, en",
    ] {
      #expect(!selects(german, value), "\(value)")
    }
    #expect(!german.matchesVary(of: getRequest(), selectingLanguage: true), "no Accept-Language")
    #expect(!selects(stored("de, en"), "de"), "two languages")
    // An exact match is chosen before a language one, however old.
    let exact = storedResponse(
      ["Cache-Control": "max-age=60", "Vary": "Accept-Language", "Content-Language": "fr"],
      request: getRequest(["Accept-Language": "fr;q=0.5, de"]))
    let request = getRequest(["Accept-Language": "fr;q=0.5, de"])
    #expect(StoredHTTPResponse.selected([german, exact], for: request) == exact)
    #expect(StoredHTTPResponse.selected([german], for: request) == german)
  }

  @Test("any field: spaces around members and split lines do not matter, order and case do")
  func otherFields() {
    let stored = stored(varyingOn: "Foo", "1,2")
    #expect(stored.matchesVary(of: getRequest(["Foo": " 1, 2 "])))
    #expect(stored.matchesVary(of: HTTPRequest(url: exampleURL, headers: HTTPHeaders([("Foo", "1"), ("Foo", "2")]))))
    #expect(!stored.matchesVary(of: getRequest(["Foo": "2, 1"])))
    #expect(!self.stored(varyingOn: "Foo", "a").matchesVary(of: getRequest(["Foo": "A"])))
  }

  @Test("an entry stored with values not yet normalised compares as a normalised one")
  func legacyValues() {
    let legacy = StoredHTTPResponse(
      response: HTTPResponse(status: 200, headers: ["Cache-Control": "max-age=60", "Vary": "Accept-Language"]),
      requestTime: t0, responseTime: t0, varyValues: ["accept-language": "en,  DE"])
    #expect(legacy.varyValues == ["accept-language": "de, en"])
    #expect(legacy.matchesVary(of: getRequest(["Accept-Language": "de, en"])))
  }
}
