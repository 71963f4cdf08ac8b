/// The value the crash writer stores (the same definition as in KilnStorageCrashWriter):
/// its payload is a function of key and generation, so a torn value cannot pass for a
/// complete one.
struct CrashValue: Codable, Sendable, Equatable {
  var key: String
  var generation: Int
  var payload: String

  static func payload(key: String, generation: Int) -> String {
    let length = 40 + (generation &* 7_919 &+ key.utf8.count &* 131) % 6_000
    let letter = Character(Unicode.Scalar(UInt8(97 + generation % 26)))
    return key + ":" + String(repeating: letter, count: length)
  }

  /// Whether this is exactly the value written for `key` at its generation.
  func isComplete(for key: String) -> Bool {
    self.key == key && payload == CrashValue.payload(key: key, generation: generation)
  }
}
