#if OpenAPI
  /// Why a KilnNetwork HTTP value has no apple/swift-http-types equivalent (with the `OpenAPI`
  /// trait).
  ///
  /// KilnNetwork's ``HTTPMethod``, ``HTTPHeaders``, ``HTTPRequest`` and ``HTTPResponse`` accept any
  /// string and any status; swift-http-types accepts only what RFC 9110 allows. A conversion to
  /// swift-http-types throws this error rather than change the value (swift-http-types would
  /// replace a forbidden byte in a field value with a space); a conversion from swift-http-types
  /// never fails for fields, methods and statuses.
  public enum HTTPTypesConversionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The method is not an HTTP token (RFC 9110 §9.1), such as `"GET /"`.
    case invalidMethod(String)
    /// The field name is not an HTTP token (RFC 9110 §5.1), such as an empty name or one with a
    /// space or a colon.
    case invalidFieldName(String)
    /// The value of the field with this name holds a character RFC 9110 §5.5 forbids (such as
    /// CR, LF or NUL). The value itself is left out: it may be a credential.
    case invalidFieldValue(name: String)
    /// The status code is outside `0...999`, the range a swift-http-types status holds.
    case invalidStatus(Int)
    /// The request's URL cannot be split into a scheme, an authority and a path, or put back
    /// together from them, described.
    case invalidURL(String)

    public var description: String {
      switch self {
      case .invalidMethod(let method): "not an HTTP method token: \(method.debugDescription)"
      case .invalidFieldName(let name): "not an HTTP field name: \(name.debugDescription)"
      case .invalidFieldValue(let name): "the value of \(name.debugDescription) holds a forbidden character"
      case .invalidStatus(let status): "not a status code in 0...999: \(status)"
      case .invalidURL(let reason): "invalid URL: \(reason)"
      }
    }
  }
#endif
