public import Foundation

/// One HTTP request as a transport sends it: a method, an absolute URL, header fields and an
/// optional body.
///
/// Targets describe requests at the API level; the handler turns each into an
/// `HTTPRequest`, lets watches change it, and hands it to a transport.
///
/// ```swift
/// var request = HTTPRequest(method: .get, url: URL(string: "https://api.example.com/items")!)
/// request.headers["Accept"] = "application/json"
/// ```
public struct HTTPRequest: Sendable, Hashable {
  /// The bytes sent after the header section.
  public enum Body: Sendable, Hashable {
    /// Bytes held in memory.
    case data(Data)
    /// The contents of a local file, streamed by transports that can.
    case file(URL)
  }

  /// The request method.
  public var method: HTTPMethod
  /// The absolute URL, query included.
  public var url: URL
  /// The header fields.
  public var headers: HTTPHeaders
  /// The body, or `nil` for none.
  public var body: Body?

  /// Creates a request.
  ///
  /// - Parameters:
  ///   - method: The request method; `GET` by default.
  ///   - url: The absolute URL, query included.
  ///   - headers: The header fields; none by default.
  ///   - body: The body; none by default.
  public init(method: HTTPMethod = .get, url: URL, headers: HTTPHeaders = [:], body: Body? = nil) {
    self.method = method
    self.url = url
    self.headers = headers
    self.body = body
  }
}
