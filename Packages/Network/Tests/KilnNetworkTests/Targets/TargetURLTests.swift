import Foundation
import KilnNetwork
import Testing

@Suite("Target URLs")
struct TargetURLTests {
  @Test("the path is appended to the base URL's own path, segment by segment")
  func pathBelowBase() throws {
    #expect(try TestAPI.item(id: 42).makeURL().absoluteString == "https://api.example.com/v1/items/42")
    let slashed = BaseURLTarget(baseURL: URL(string: "https://api.example.com/v1/")!, path: "/items/")
    #expect(try slashed.makeURL().absoluteString == "https://api.example.com/v1/items/")
  }

  @Test(
    "query values are percent-encoded exactly",
    arguments: [
      ("a&b", "a%26b"), ("a=b", "a%3Db"), ("a+b", "a%2Bb"), ("a b", "a%20b"), ("a/b", "a%2Fb"),
      ("a?b", "a%3Fb"), ("a#b", "a%23b"), ("100%", "100%25"), ("🔥", "%F0%9F%94%A5"), ("-._~", "-._~"),
    ]
  )
  func queryValueEncoding(value: String, encoded: String) throws {
    let url = try TestAPI.search(["q": value]).makeURL()
    #expect(url.absoluteString == "https://api.example.com/v1/search?q=\(encoded)")
    // And Foundation reads it back as the value written.
    let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems
    #expect(items == [URLQueryItem(name: "q", value: value)])
  }

  @Test("path segments are percent-encoded, a segment's own slash included")
  func pathSegmentEncoding() throws {
    let url = try TestAPI.segments(["files", "a/b c?d#e%f+g", "🔥"]).makeURL()
    #expect(url.absoluteString == "https://api.example.com/v1/files/a%2Fb%20c%3Fd%23e%25f%2Bg/%F0%9F%94%A5")
    #expect(url.path == "/v1/files/a/b c?d#e%f+g/🔥")
  }

  @Test("repeated names and the written order are kept; a nil value is a bare name")
  func repeatedAndOrdered() throws {
    var parameters: QueryParameters = ["z": 1, "a": true]
    parameters.append("x", for: "tag")
    parameters.append("y", for: "tag")
    parameters.append(nil, for: "flag")
    let url = try TestAPI.search(parameters).makeURL()
    #expect(url.query == "z=1&a=true&tag=x&tag=y&flag")
  }

  @Test("parameters from a dictionary are sorted by name")
  func sortedDictionary() throws {
    let parameters = QueryParameters(sortedByName: ["b": 2, "a": 1, "c": "x y"])
    #expect(parameters.percentEncoded == "a=1&b=2&c=x%20y")
  }

  @Test("a query of the base URL is kept before the parameters, its fragment dropped")
  func baseQuery() throws {
    struct Keyed: TargetGroup {
      var baseURL: URL { URL(string: "https://api.example.com/v1?key=k#top")! }
      var path: String { "search" }
      var task: NetworkTask { .parameters(["q": "1"]) }
    }
    #expect(try Keyed().makeURL().absoluteString == "https://api.example.com/v1/search?key=k&q=1")
  }

  @Test(
    "a base URL without an http(s) scheme or a host is an invalid-URL error",
    arguments: ["relative/path", "ftp://example.com", "file:///tmp/x", "https:///nohost"]
  )
  func invalidBaseURL(base: String) throws {
    let target = BaseURLTarget(baseURL: URL(string: base)!)
    #expect {
      try target.makeURL()
    } throws: { error in
      guard case NetworkError.invalidURL = error else { return false }
      return true
    }
  }

  @Test("the default storage key is the method and the URL")
  func storageKey() {
    #expect(TestAPI.item(id: 1).storageKey == "GET https://api.example.com/v1/items/1")
    #expect(TestAPI.create(body: .data(Data(), contentType: nil)).storageKey == "POST https://api.example.com/v1/items")
  }
}
