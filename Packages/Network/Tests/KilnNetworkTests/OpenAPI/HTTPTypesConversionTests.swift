#if OpenAPI
  import Foundation
  import HTTPTypes
  import KilnNetwork
  import Testing

  /// The fields as `name: value` lines, names spelled as given, in order. `HTTPFields`' own `==`
  /// ignores how fields of different names interleave, so order is compared on these.
  private func lines(_ fields: HTTPFields) -> [String] {
    fields.map { "\($0.name.rawName): \($0.value)" }
  }

  private func lines(_ headers: HTTPHeaders) -> [String] {
    headers.map { "\($0.name): \($0.value)" }
  }

  @Suite("Conversions between KilnNetwork and swift-http-types", .timeLimit(.minutes(1)))
  struct HTTPTypesConversionTests {
    // MARK: Fields

    @Test("headers → fields → headers: every field, repeated names, their order and spelling kept")
    func headersRoundTrip() throws {
      let headers = HTTPHeaders([
        ("Accept", "application/json"),
        ("Set-Cookie", "a=1; Path=/; HttpOnly"),
        ("X-Trace", "1"),
        ("set-cookie", "b=2"),
        ("Cache-Control", "max-age=60, public"),
        ("x-trace", "2"),
        ("X-TRACE", "3"),
        ("Empty", ""),
        ("Accept", "text/plain;q=0.5"),
      ])
      let fields = try HTTPFields(headers)
      #expect(lines(fields) == lines(headers))
      #expect(fields[values: .setCookie] == ["a=1; Path=/; HttpOnly", "b=2"])
      #expect(fields[values: HTTPField.Name("x-trace")!] == ["1", "2", "3"])
      let back = HTTPHeaders(fields)
      #expect(back == headers)
      #expect(back.values(for: "Set-Cookie") == ["a=1; Path=/; HttpOnly", "b=2"])
    }

    @Test("fields → headers → fields: every field, repeated names, their order and spelling kept")
    func fieldsRoundTrip() throws {
      var fields = HTTPFields()
      fields.append(HTTPField(name: .contentType, value: "application/json"))
      fields.append(HTTPField(name: .vary, value: "Accept"))
      fields.append(HTTPField(name: HTTPField.Name("X-Custom-HEADER")!, value: "1"))
      fields.append(HTTPField(name: .setCookie, value: "a=1"))
      fields.append(HTTPField(name: .vary, value: "Accept-Encoding"))
      fields.append(HTTPField(name: HTTPField.Name("x-custom-header")!, value: "2"))
      fields.append(HTTPField(name: .setCookie, value: "b=2"))
      let headers = HTTPHeaders(fields)
      #expect(lines(headers) == lines(fields))
      #expect(headers.values(for: "vary") == ["Accept", "Accept-Encoding"])
      let back = try HTTPFields(headers)
      #expect(back == fields)
      #expect(lines(back) == lines(fields))
    }

    @Test("empty headers and empty fields convert to each other")
    func empty() throws {
      #expect(try HTTPFields(HTTPHeaders()).isEmpty)
      #expect(HTTPHeaders(HTTPFields()).isEmpty)
    }

    @Test(
      "a name made of any token characters keeps its spelling",
      arguments: ["a", "x-lower", "X-UPPER", "x_under_score", "X.Dotted.Name", "!#$%&'*+-.^_`|~09azAZ"])
    func oddTokenNames(name: String) throws {
      let headers = HTTPHeaders([(name, "v1"), ("Other", "o"), (name, "v2")])
      let fields = try HTTPFields(headers)
      #expect(fields.map(\.name.rawName) == [name, "Other", name])
      #expect(fields[values: HTTPField.Name(name)!] == ["v1", "v2"])
      #expect(HTTPHeaders(fields) == headers)
    }

    @Test(
      "a name that is not an HTTP token is a typed error",
      arguments: ["", "Bad Name", "Colon:", ":path", "Ünïcode", "tab\tname", "new\nline", "quote\"", "(paren)", "a/b"])
    func invalidNames(name: String) {
      let headers = HTTPHeaders([("Accept", "*/*"), (name, "value")])
      #expect(throws: HTTPTypesConversionError.invalidFieldName(name)) { try HTTPFields(headers) }
    }

    @Test(
      "values with spaces, tabs, quotes, commas and UTF-8 are kept",
      arguments: ["", "café ☕️", "a\tb", "\"quoted, with a comma\"", "a, b,c", "W/\"etag\"", "=?utf-8?q?x?="])
    func oddValues(value: String) throws {
      let headers = HTTPHeaders([("X-Value", value)])
      let fields = try HTTPFields(headers)
      #expect(fields[HTTPField.Name("X-Value")!] == value)
      #expect(HTTPHeaders(fields) == headers)
    }

    @Test(
      "a value with a character HTTP forbids is a typed error, not a changed value",
      arguments: ["a\r\nInjected: 1", "a\nb", "nul\u{0}byte", "bell\u{7}", "delete\u{7F}"])
    func invalidValues(value: String) {
      let headers = HTTPHeaders([("X-Value", value)])
      #expect(throws: HTTPTypesConversionError.invalidFieldValue(name: "X-Value")) { try HTTPFields(headers) }
    }

    // MARK: Requests

    @Test(
      "request → swift-http-types → request: method, URL, fields and body kept",
      arguments: [
        "https://example.com/items?page=2&sort=new",
        "http://127.0.0.1:8080/a%20b/c%2Fd?q=%26x&empty=",
        "https://[::1]:8443/v1/",
        "http://example.com:80/",
        "https://api.example.com/search?q=caf%C3%A9",
      ])
    func requestRoundTrip(url: String) throws {
      for method in [HTTPMethod.get, .post, .delete, .query, "PURGE"] {
        let request = KilnNetwork.HTTPRequest(
          method: method, url: URL(string: url)!,
          headers: HTTPHeaders([("Accept", "application/json"), ("X-Trace", "1"), ("x-trace", "2")]),
          body: method == .post ? .data(Data("{}".utf8)) : nil)
        let converted = try HTTPTypes.HTTPRequest(request)
        #expect(converted.method.rawValue == method.rawValue)
        #expect(lines(converted.headerFields) == lines(request.headers))
        let back = try KilnNetwork.HTTPRequest(converted, body: request.body)
        #expect(back == request)
      }
    }

    @Test("a URL splits into scheme, authority and path with the query, percent-encoding as it is")
    func requestPseudoFields() throws {
      let request = KilnNetwork.HTTPRequest(url: URL(string: "http://127.0.0.1:8080/a%20b/c?q=%26x#fragment")!)
      let converted = try HTTPTypes.HTTPRequest(request)
      #expect(converted.scheme == "http")
      #expect(converted.authority == "127.0.0.1:8080")
      #expect(converted.path == "/a%20b/c?q=%26x")
      // The fragment is never sent in HTTP.
      #expect(try KilnNetwork.HTTPRequest(converted).url == URL(string: "http://127.0.0.1:8080/a%20b/c?q=%26x")!)
      // An empty path is `/`, as on the wire.
      let bare = try HTTPTypes.HTTPRequest(KilnNetwork.HTTPRequest(url: URL(string: "https://example.com")!))
      #expect(bare.path == "/")
    }

    @Test("swift-http-types request → request → swift-http-types request: everything kept")
    func httpTypesRequestRoundTrip() throws {
      var fields = HTTPFields()
      fields.append(HTTPField(name: .authorization, value: "Bearer x"))
      fields.append(HTTPField(name: HTTPField.Name("X-Trace")!, value: "1"))
      fields.append(HTTPField(name: .contentType, value: "application/json"))
      fields.append(HTTPField(name: HTTPField.Name("x-trace")!, value: "2"))
      let request = HTTPTypes.HTTPRequest(
        method: .put, scheme: "https", authority: "api.example.com:8443", path: "/v1/items/7?dry-run=1",
        headerFields: fields)
      let kiln = try KilnNetwork.HTTPRequest(request, body: .data(Data("{}".utf8)))
      #expect(kiln.method == .put)
      #expect(kiln.url == URL(string: "https://api.example.com:8443/v1/items/7?dry-run=1")!)
      #expect(kiln.body == .data(Data("{}".utf8)))
      let back = try HTTPTypes.HTTPRequest(kiln)
      #expect(back == request)
      #expect(lines(back.headerFields) == lines(fields))
    }

    @Test("a method that is not a token, or a URL without scheme or host, is a typed error")
    func invalidRequests() {
      let url = URL(string: "https://example.com/")!
      for method in ["GET /", "", "BAD\r\nMETHOD"] {
        #expect(throws: HTTPTypesConversionError.invalidMethod(method)) {
          try HTTPTypes.HTTPRequest(KilnNetwork.HTTPRequest(method: HTTPMethod(rawValue: method), url: url))
        }
      }
      for string in ["/relative/path", "mailto:someone@example.com", "file:///tmp/x"] {
        #expect(throws: HTTPTypesConversionError.self) {
          try HTTPTypes.HTTPRequest(KilnNetwork.HTTPRequest(url: URL(string: string)!))
        }
      }
      #expect(throws: HTTPTypesConversionError.invalidFieldName("Bad Name")) {
        try HTTPTypes.HTTPRequest(KilnNetwork.HTTPRequest(url: url, headers: ["Bad Name": "x"]))
      }
    }

    @Test("a swift-http-types request without an absolute URL is a typed error")
    func requestsWithoutURL() {
      let relative = HTTPTypes.HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/items")
      let connect = HTTPTypes.HTTPRequest(method: .connect, scheme: nil, authority: "example.com:443", path: nil)
      let asterisk = HTTPTypes.HTTPRequest(method: .options, scheme: "https", authority: "example.com", path: "*")
      for request in [relative, connect, asterisk] {
        #expect(throws: HTTPTypesConversionError.self) { try KilnNetwork.HTTPRequest(request) }
      }
    }

    // MARK: Responses

    @Test(
      "response → swift-http-types → response: status and fields kept", arguments: [0, 100, 200, 304, 418, 599, 999])
    func responseRoundTrip(status: Int) throws {
      let response = KilnNetwork.HTTPResponse(
        status: status,
        headers: HTTPHeaders([("Set-Cookie", "a=1"), ("Content-Type", "application/json"), ("set-cookie", "b=2")]),
        body: Data("[1]".utf8), url: URL(string: "https://example.com/a")!)
      let converted = try HTTPTypes.HTTPResponse(response)
      #expect(converted.status.code == status)
      #expect(lines(converted.headerFields) == lines(response.headers))
      let back = KilnNetwork.HTTPResponse(converted, body: response.body, url: response.url)
      #expect(back == response)
    }

    @Test("swift-http-types response → response → swift-http-types response: status code and fields kept")
    func httpTypesResponseRoundTrip() throws {
      var fields = HTTPFields()
      fields.append(HTTPField(name: .cacheControl, value: "max-age=60"))
      fields.append(HTTPField(name: .setCookie, value: "a=1"))
      fields.append(HTTPField(name: .cacheControl, value: "public"))
      let response = HTTPTypes.HTTPResponse(status: .notModified, headerFields: fields)
      let kiln = KilnNetwork.HTTPResponse(response)
      #expect(kiln.status == 304)
      #expect(kiln.headers["cache-control"] == "max-age=60, public")
      let back = try HTTPTypes.HTTPResponse(kiln)
      #expect(back == response)
      #expect(lines(back.headerFields) == lines(fields))
    }

    @Test("a status outside 0...999 is a typed error", arguments: [-1, 1000, Int.max])
    func invalidStatus(status: Int) {
      #expect(throws: HTTPTypesConversionError.invalidStatus(status)) {
        try HTTPTypes.HTTPResponse(KilnNetwork.HTTPResponse(status: status))
      }
    }
  }
#endif
