/// An HTTP request method: the standard ones as static members, any other by name.
///
/// ```swift
/// let method: HTTPMethod = .get
/// let custom: HTTPMethod = "PURGE"      // any token is a method
/// method.isSafe                          // true
/// HTTPMethod.put.isIdempotent            // true
/// ```
///
/// Method names are case-sensitive (RFC 9110 §9.1): `"get"` is not ``get``.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
  /// The method's name as sent on the wire, such as `"GET"`.
  public let rawValue: String

  /// Creates a method from its name.
  ///
  /// - Parameter rawValue: The name as sent on the wire; case matters.
  public init(rawValue: String) {
    self.rawValue = rawValue
  }

  /// Creates a method from a string literal, such as `"PURGE"`.
  public init(stringLiteral value: String) {
    self.init(rawValue: value)
  }

  public var description: String { rawValue }

  /// `GET`: transfer a current representation of the target resource.
  public static let get = HTTPMethod(rawValue: "GET")
  /// `HEAD`: the same as `GET`, but transfer only the status line and header section.
  public static let head = HTTPMethod(rawValue: "HEAD")
  /// `POST`: process the enclosed representation.
  public static let post = HTTPMethod(rawValue: "POST")
  /// `PUT`: replace the target resource with the enclosed representation.
  public static let put = HTTPMethod(rawValue: "PUT")
  /// `PATCH`: apply partial modifications (RFC 5789).
  public static let patch = HTTPMethod(rawValue: "PATCH")
  /// `DELETE`: remove the target resource.
  public static let delete = HTTPMethod(rawValue: "DELETE")
  /// `OPTIONS`: describe the communication options for the target resource.
  public static let options = HTTPMethod(rawValue: "OPTIONS")
  /// `TRACE`: perform a message loop-back test.
  public static let trace = HTTPMethod(rawValue: "TRACE")
  /// `CONNECT`: establish a tunnel to the server.
  public static let connect = HTTPMethod(rawValue: "CONNECT")
  /// `QUERY`: a safe, idempotent request with a body (draft-ietf-httpbis-safe-method-w-body).
  public static let query = HTTPMethod(rawValue: "QUERY")

  /// Whether the method is safe (RFC 9110 §9.2.1): `GET`, `HEAD`, `OPTIONS`, `TRACE`, `QUERY`.
  ///
  /// An HTTP cache invalidates stored responses after a successful request with an unsafe
  /// method.
  public var isSafe: Bool {
    switch self {
    case .get, .head, .options, .trace, .query: true
    default: false
    }
  }

  /// Whether the method is idempotent (RFC 9110 §9.2.2): the safe methods, `PUT` and `DELETE`.
  ///
  /// Requests with an idempotent method may be retried automatically.
  public var isIdempotent: Bool {
    isSafe || self == .put || self == .delete
  }
}
