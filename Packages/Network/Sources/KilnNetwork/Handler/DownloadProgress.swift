/// How much of a response body has arrived, reported by a ``NetworkHandler`` request.
///
/// ``receivedBytes`` never goes down within an attempt; a retry is a new ``attempt`` that
/// starts again from zero.
public struct DownloadProgress: Sendable, Hashable {
  /// The attempt the bytes belong to, from 1.
  public var attempt: Int
  /// The body bytes received so far in this attempt.
  public var receivedBytes: Int64
  /// The body's size from `Content-Length`, when known.
  public var expectedBytes: Int64?

  /// Creates a progress report.
  public init(attempt: Int, receivedBytes: Int64, expectedBytes: Int64?) {
    self.attempt = attempt
    self.receivedBytes = receivedBytes
    self.expectedBytes = expectedBytes
  }

  /// The fraction received, in `0...1`, when the size is known.
  public var fractionCompleted: Double? {
    guard let expectedBytes, expectedBytes > 0 else { return nil }
    return min(Double(receivedBytes) / Double(expectedBytes), 1)
  }
}
