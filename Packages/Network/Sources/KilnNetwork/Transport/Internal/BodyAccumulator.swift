import Foundation

/// Collects a response body as it streams in: enforces ``TransportOptions/maximumBodySize``
/// (from `Content-Length` before any byte arrives, else as bytes arrive) and works out the
/// progress to report. A value type with no locks, shared by every transport; the transport
/// feeds it one event at a time, in order.
struct BodyAccumulator {
  /// The body received so far.
  private(set) var body = Data()
  /// The body length the head announced, when it did.
  private(set) var expected: Int64?
  private let limit: Int?
  private let reportsProgress: Bool
  private var lastReported: Int64 = -1

  /// Creates an accumulator.
  ///
  /// - Parameters:
  ///   - limit: The largest body accepted, in bytes; `nil` for no limit.
  ///   - reportsProgress: Whether this body's progress is reported (not for a redirect that is
  ///     about to be followed).
  init(limit: Int?, reportsProgress: Bool) {
    self.limit = limit
    self.reportsProgress = reportsProgress
  }

  /// Reads the announced length of the body.
  ///
  /// - Parameter contentLength: The `Content-Length`, when the head gave one that describes the
  ///   bytes the transport delivers.
  /// - Returns: ``TransportError/bodyTooLarge(limit:)`` when the announced body is over the limit.
  mutating func expect(contentLength: Int64?) -> TransportError? {
    expected = contentLength
    if let limit, let contentLength, contentLength > Int64(limit) {
      return .bodyTooLarge(limit: limit)
    }
    if let contentLength, contentLength > 0, contentLength <= 16 * 1024 * 1024 {
      body.reserveCapacity(Int(contentLength))
    }
    return nil
  }

  /// Adds bytes that arrived.
  ///
  /// - Parameter bytes: The bytes.
  /// - Returns: ``TransportError/bodyTooLarge(limit:)`` when the body is now over the limit (the
  ///   bytes are not kept).
  mutating func append(_ bytes: some Collection<UInt8>) -> TransportError? {
    if let limit, body.count + bytes.count > limit {
      return .bodyTooLarge(limit: limit)
    }
    body.append(contentsOf: bytes)
    return nil
  }

  /// The progress to report now, or `nil` when there is nothing new: never fewer bytes than the
  /// report before.
  mutating func progress() -> (received: Int64, expected: Int64?)? {
    guard reportsProgress else { return nil }
    let received = Int64(body.count)
    guard received > lastReported else { return nil }
    lastReported = received
    return (received, expected.map { max($0, received) })
  }
}
