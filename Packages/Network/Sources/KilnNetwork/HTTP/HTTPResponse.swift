public import Foundation

/// One HTTP response: the status, the header fields and the whole body.
///
/// ```swift
/// let response = try await handler.request(API.articles)   // a handler of KilnNetwork
/// response.status                       // 200
/// response.headers["Content-Type"]      // "application/json"
/// let articles = try JSONDecoder().decode([Article].self, from: response.body)
/// ```
public struct HTTPResponse: Sendable, Hashable {
  /// The status code, such as `200` or `404`.
  public var status: Int
  /// The header fields.
  public var headers: HTTPHeaders
  /// The body.
  public var body: Data
  /// The URL the response came from (after any redirect), when known.
  public var url: URL?

  /// Creates a response.
  ///
  /// - Parameters:
  ///   - status: The status code.
  ///   - headers: The header fields; none by default.
  ///   - body: The body; empty by default.
  ///   - url: The URL the response came from, when known.
  public init(status: Int, headers: HTTPHeaders = [:], body: Data = Data(), url: URL? = nil) {
    self.status = status
    self.headers = headers
    self.body = body
    self.url = url
  }

  /// Whether the status is in `200...299`.
  public var isSuccessful: Bool {
    (200...299).contains(status)
  }
}
