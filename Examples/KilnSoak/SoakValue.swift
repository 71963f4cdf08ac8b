import Foundation

/// A value the soak writes and reads back: its payload is a function of its key and
/// sequence number, and a checksum covers all three, so a reader can tell a value that was
/// written from a torn, mixed or invented one.
struct SoakValue: Codable, Hashable, Sendable {
  var key: String
  var sequence: Int
  var payload: String
  var checksum: UInt64

  init(key: String, sequence: Int) {
    self.key = key
    self.sequence = sequence
    payload = Self.payload(key: key, sequence: sequence)
    checksum = Self.checksum(key: key, sequence: sequence, payload: payload)
  }

  /// 16 to 1,215 characters that depend on both key and sequence.
  static func payload(key: String, sequence: Int) -> String {
    let keySum = key.utf8.reduce(0) { $0 &* 31 &+ Int($1) }
    let length = 16 + abs((sequence &* 7_919) &+ keySum) % 1_200
    let letter = Character(Unicode.Scalar(UInt8(97 + abs(sequence % 26))))
    return "\(key)#\(sequence):" + String(repeating: letter, count: length)
  }

  /// FNV-1a over the key, the sequence number and the payload.
  static func checksum(key: String, sequence: Int, payload: String) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in Array("\(key)|\(sequence)|".utf8) + Array(payload.utf8) {
      hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
    }
    return hash
  }

  /// Whether this value is exactly what `SoakValue(key: key, sequence: sequence)` wrote.
  var isIntact: Bool {
    checksum == Self.checksum(key: key, sequence: sequence, payload: payload)
      && payload == Self.payload(key: key, sequence: sequence)
  }
}
