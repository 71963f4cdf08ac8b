/// A value a child process writes and its parent reads back after killing it: its payload is
/// a function of its key and sequence number, and a checksum covers all three, so a reader
/// can tell a value that was written from a torn, mixed or invented one.
///
/// ```swift
/// // the child
/// try await store.setValue(CheckedValue(key: key, sequence: n), forKey: key)
/// // the parent, after SIGKILL
/// #expect(try await store.value(forKey: key)?.isIntact(for: key) != false)
/// ```
public struct CheckedValue: Codable, Hashable, Sendable {
  /// The key the value was written under.
  public var key: String
  /// The writer's sequence number (or generation) for this write.
  public var sequence: Int
  /// Characters that depend on ``key`` and ``sequence``.
  public var payload: String
  /// FNV-1a over ``key``, ``sequence`` and ``payload``.
  public var checksum: UInt64

  /// The value written for `key` at `sequence`.
  ///
  /// - Parameters:
  ///   - key: The key it is written under.
  ///   - sequence: The writer's sequence number.
  ///   - payloadLengths: The range the payload's length (after its `key#sequence:` prefix) is
  ///     drawn from, as a function of key and sequence; larger values straddle more pages.
  public init(key: String, sequence: Int, payloadLengths: Range<Int> = 16..<1_216) {
    self.key = key
    self.sequence = sequence
    let keySum = key.utf8.reduce(0) { $0 &* 31 &+ Int($1) }
    let length = payloadLengths.lowerBound + abs((sequence &* 7_919) &+ keySum) % payloadLengths.count
    let letter = Character(Unicode.Scalar(UInt8(97 + abs(sequence % 26))))
    payload = "\(key)#\(sequence):" + String(repeating: letter, count: length)
    checksum = Self.checksum(key: key, sequence: sequence, payload: payload)
  }

  /// Whether this value is whole: its checksum matches, and its payload is one made for its
  /// key and sequence number.
  public var isIntact: Bool {
    guard checksum == Self.checksum(key: key, sequence: sequence, payload: payload) else { return false }
    let prefix = "\(key)#\(sequence):"
    let letter = Character(Unicode.Scalar(UInt8(97 + abs(sequence % 26))))
    return payload.hasPrefix(prefix) && payload.dropFirst(prefix.count).allSatisfy { $0 == letter }
  }

  /// Whether this value is whole and was written under `key`.
  public func isIntact(for key: String) -> Bool {
    self.key == key && isIntact
  }

  private static func checksum(key: String, sequence: Int, payload: String) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in Array("\(key)|\(sequence)|".utf8) + Array(payload.utf8) {
      hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
    }
    return hash
  }
}
