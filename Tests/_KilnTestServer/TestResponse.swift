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
  /// How long the server waits before it sends the response head.
  public var delay: Duration = .zero
  /// When set, the body is this many bytes of ``patternByte(at:)`` made while they are sent
  /// (``body`` is ignored), so a huge body costs no memory.
  public var generatedBodyLength: Int?
  /// Whether the head carries `Content-Length`; without it the body is sent chunked
  /// (`Transfer-Encoding: chunked`).
  public var announcesLength = true
  /// When set, the body is written in pieces of this many bytes…
  public var chunkSize: Int?
  /// …with this pause before each piece after the first (a slow, trickling body).
  public var chunkInterval: Duration = .zero
  /// When set, the server closes the connection after this many body bytes, although the
  /// head announced the whole body (a connection dropped mid-body).
  public var dropsAfterBodyBytes: Int?

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

  /// A redirect to `location` (absolute, or relative to the request's URL).
  public static func redirect(to location: String, status: Int = 302) -> TestResponse {
    TestResponse(status: status, headers: [("Location", location)])
  }

  /// A body of `count` bytes of ``patternByte(at:)``, made while it is sent, in 64 KiB pieces.
  public static func generated(_ count: Int, status: Int = 200) -> TestResponse {
    var response = TestResponse(status: status, headers: [("Content-Type", "application/octet-stream")])
    response.generatedBodyLength = count
    response.chunkSize = 64 * 1024
    return response
  }

  /// The byte at `offset` of a ``generated(_:status:)`` body.
  public static func patternByte(at offset: Int) -> UInt8 {
    UInt8(truncatingIfNeeded: offset % 251)
  }

  /// The first `count` bytes of a ``generated(_:status:)`` body.
  public static func pattern(count: Int) -> [UInt8] {
    (0..<count).map(patternByte(at:))
  }

  /// This response, sent after `delay`.
  public func delayed(by delay: Duration) -> TestResponse {
    var copy = self
    copy.delay = delay
    return copy
  }

  /// This response with its body sent `chunkSize` bytes at a time, pausing `interval` before
  /// each piece after the first.
  public func trickled(chunkSize: Int, every interval: Duration) -> TestResponse {
    var copy = self
    copy.chunkSize = max(1, chunkSize)
    copy.chunkInterval = interval
    return copy
  }

  /// This response sent chunked, with no `Content-Length`.
  public func withoutContentLength() -> TestResponse {
    var copy = self
    copy.announcesLength = false
    return copy
  }

  /// This response with the connection closed after `count` body bytes, although the head
  /// announces the whole body.
  public func droppingConnection(afterBodyBytes count: Int) -> TestResponse {
    var copy = self
    copy.dropsAfterBodyBytes = count
    return copy
  }

  /// Whether the body is sent in one piece, at once, in full.
  var isSimple: Bool {
    delay == .zero && generatedBodyLength == nil && announcesLength && chunkSize == nil && dropsAfterBodyBytes == nil
  }

  /// The length of the body to send.
  var bodyLength: Int {
    generatedBodyLength ?? body.count
  }

  /// The body bytes in `range`.
  func bodyBytes(_ range: Range<Int>) -> [UInt8] {
    if generatedBodyLength != nil {
      return range.map(Self.patternByte(at:))
    }
    return Array(body[range])
  }
}
