import Foundation

/// What a ``TestServer`` answers.
public struct TestResponse: Sendable {
  /// The status code.
  public var status: Int
  /// The headers (`Content-Length` is set by the server).
  public var headers: [(String, String)]
  /// The body.
  public var body: [UInt8]
  /// Whether to close the connection instead of answering.
  public var dropsConnection = false

  /// A response with any status, headers and body.
  public init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
    self.status = status
    self.headers = headers
    self.body = body
  }

  /// A status with an empty body: `.status(503)`.
  public static func status(_ status: Int, headers: [(String, String)] = []) -> TestResponse {
    TestResponse(status: status, headers: headers)
  }

  /// `value` encoded as JSON, with `Content-Type: application/json`.
  public static func json(_ value: some Encodable, status: Int = 200, headers: [(String, String)] = []) -> TestResponse
  {
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    let body = (try? encoder.encode(value)) ?? Data("null".utf8)
    return TestResponse(status: status, headers: [("Content-Type", "application/json")] + headers, body: Array(body))
  }

  /// `text` as a UTF-8 body with `Content-Type: text/plain`.
  public static func text(_ text: String, status: Int = 200) -> TestResponse {
    TestResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Array(text.utf8))
  }

  /// No answer at all: the server closes the connection (a dropped connection).
  public static var closeConnection: TestResponse {
    var response = TestResponse(status: 0)
    response.dropsConnection = true
    return response
  }
}
