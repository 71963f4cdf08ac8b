#if OpenAPI
  public import Foundation
  public import HTTPTypes

  // Conversions between KilnNetwork's HTTP values and apple/swift-http-types' (with the `OpenAPI`
  // trait). Both keep header fields as an ordered list with repeated names and each name's
  // spelling, so the fields convert one for one: nothing is joined, split, reordered or
  // recased. KilnNetwork's names are the module's own: a file that imports both modules spells
  // `HTTPTypes.HTTPRequest` and `KilnNetwork.HTTPRequest`.

  // MARK: - Header fields

  extension HTTPHeaders {
    /// Creates headers from swift-http-types fields, one field for each, in their order, with
    /// repeated names kept and each name spelled as it was given (`HTTPField.Name.rawName`).
    ///
    /// ```swift
    /// var fields = HTTPFields()
    /// fields.append(HTTPField(name: .setCookie, value: "a=1"))
    /// fields.append(HTTPField(name: .setCookie, value: "b=2"))
    /// HTTPHeaders(fields).values(for: "Set-Cookie")     // ["a=1", "b=2"]
    /// ```
    ///
    /// Values are read as UTF-8 (`HTTPField.value`); a field's HPACK/QPACK indexing strategy
    /// has no KilnNetwork equivalent and is left out.
    ///
    /// - Parameter fields: The fields.
    public init(_ fields: HTTPFields) {
      self.init(fields.map { Field(name: $0.name.rawName, value: $0.value) })
    }
  }

  extension HTTPFields {
    /// Creates swift-http-types fields from KilnNetwork headers, one field for each, in their
    /// order, with repeated names kept and each name's spelling kept (as `rawName`).
    ///
    /// ```swift
    /// let headers: HTTPHeaders = ["Accept": "application/json", "X-Trace": "1", "x-trace": "2"]
    /// let fields = try HTTPFields(headers)
    /// fields[values: HTTPField.Name("X-Trace")!]     // ["1", "2"]
    /// HTTPHeaders(fields) == headers                  // true
    /// ```
    ///
    /// - Parameter headers: The headers.
    /// - Throws: ``HTTPTypesConversionError/invalidFieldName(_:)`` for a name that is not an HTTP
    ///   token (such as an empty name, or one with a space, a colon or a non-ASCII letter), and
    ///   ``HTTPTypesConversionError/invalidFieldValue(name:)`` for a value with a character
    ///   RFC 9110 forbids (such as CR, LF or NUL), which swift-http-types would replace.
    public init(_ headers: HTTPHeaders) throws(HTTPTypesConversionError) {
      self.init()
      reserveCapacity(headers.count)
      for field in headers.fields {
        guard let name = HTTPField.Name(field.name) else { throw .invalidFieldName(field.name) }
        guard HTTPField.isValidValue(field.value) else { throw .invalidFieldValue(name: field.name) }
        append(HTTPField(name: name, value: field.value))
      }
    }
  }

  // MARK: - Requests

  extension HTTPTypes.HTTPRequest {
    /// Creates a swift-http-types request with the method, URL and header fields of a
    /// KilnNetwork request.
    ///
    /// The URL becomes the `:scheme`, `:authority` (host and port) and `:path` (path and query,
    /// percent-encoded as they are; `/` for an empty path) pseudo-header fields, as
    /// swift-http-types' own `init(method:url:headerFields:)` splits it. A user and password in
    /// the URL, and its fragment, are never sent in HTTP and are left out. The body is not part
    /// of a swift-http-types request: send `request.body` beside it.
    ///
    /// ```swift
    /// let request = KilnNetwork.HTTPRequest(url: URL(string: "https://example.com/items?page=2")!)
    /// let converted = try HTTPTypes.HTTPRequest(request)
    /// converted.path                                        // "/items?page=2"
    /// try KilnNetwork.HTTPRequest(converted) == request    // true
    /// ```
    ///
    /// - Parameter request: The request.
    /// - Throws: ``HTTPTypesConversionError/invalidMethod(_:)`` for a method that is not an HTTP
    ///   token, ``HTTPTypesConversionError/invalidURL(_:)`` for a URL without a scheme or a host,
    ///   and what ``HTTPTypes/HTTPFields/init(_:)`` throws for the header fields.
    public init(_ request: KilnNetwork.HTTPRequest) throws(HTTPTypesConversionError) {
      guard let method = Method(request.method.rawValue) else { throw .invalidMethod(request.method.rawValue) }
      let headerFields = try HTTPFields(request.headers)
      // The conditions under which swift-http-types' URL split would stop the program.
      guard let components = URLComponents(url: request.url, resolvingAgainstBaseURL: true),
        components.string != nil, components.scheme?.isEmpty == false
      else { throw .invalidURL("no scheme: \(request.url.absoluteString)") }
      guard components.host?.isEmpty == false else { throw .invalidURL("no host: \(request.url.absoluteString)") }
      self.init(method: method, url: request.url, headerFields: headerFields)
    }
  }

  extension KilnNetwork.HTTPRequest {
    /// Creates a KilnNetwork request from a swift-http-types request and a body.
    ///
    /// The URL is put together from the `:scheme`, `:authority` and `:path` pseudo-header
    /// fields (swift-http-types' `url`); the header fields are kept one for one, in order. The
    /// `:protocol` pseudo-header field of an extended `CONNECT` has no KilnNetwork equivalent and
    /// is left out.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - body: The body; none by default.
    /// - Throws: ``HTTPTypesConversionError/invalidURL(_:)`` when the request has no scheme,
    ///   authority or path (such as `CONNECT` or `OPTIONS *`), or they make no URL.
    public init(_ request: HTTPTypes.HTTPRequest, body: Body? = nil) throws(HTTPTypesConversionError) {
      guard let url = request.url else {
        let parts = [request.scheme, request.authority, request.path].map { $0 ?? "<none>" }
        throw .invalidURL("no absolute URL in scheme \(parts[0]), authority \(parts[1]), path \(parts[2])")
      }
      self.init(
        method: HTTPMethod(rawValue: request.method.rawValue), url: url, headers: HTTPHeaders(request.headerFields),
        body: body)
    }
  }

  // MARK: - Responses

  extension HTTPTypes.HTTPResponse {
    /// Creates a swift-http-types response with the status and header fields of a KilnNetwork
    /// response.
    ///
    /// The status gets an empty reason phrase (KilnNetwork keeps none); the body and the URL
    /// are not part of a swift-http-types response.
    ///
    /// - Parameter response: The response.
    /// - Throws: ``HTTPTypesConversionError/invalidStatus(_:)`` for a status outside `0...999`,
    ///   and what ``HTTPTypes/HTTPFields/init(_:)`` throws for the header fields.
    public init(_ response: KilnNetwork.HTTPResponse) throws(HTTPTypesConversionError) {
      guard (0...999).contains(response.status) else { throw .invalidStatus(response.status) }
      self.init(status: Status(code: response.status), headerFields: try HTTPFields(response.headers))
    }
  }

  extension KilnNetwork.HTTPResponse {
    /// Creates a KilnNetwork response from a swift-http-types response, a body and a URL.
    ///
    /// The status code and the header fields are kept, one for one and in order; the reason
    /// phrase is left out.
    ///
    /// - Parameters:
    ///   - response: The response.
    ///   - body: The body; empty by default.
    ///   - url: The URL the response came from, when known.
    public init(_ response: HTTPTypes.HTTPResponse, body: Data = Data(), url: URL? = nil) {
      self.init(status: response.status.code, headers: HTTPHeaders(response.headerFields), body: body, url: url)
    }
  }
#endif
