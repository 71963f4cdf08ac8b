import Foundation
import KilnCore
import Testing

@Suite("IdempotencyKey")
struct IdempotencyKeyTests {
  @Test("new keys are random version 4 UUIDs, all different")
  func randomKeys() {
    let keys = (0..<10_000).map { _ in IdempotencyKey() }
    #expect(Set(keys).count == keys.count)
    for key in keys.prefix(100) {
      let bytes = key.bytes
      #expect(bytes[6] >> 4 == 4, "version nibble of \(key)")
      #expect(bytes[8] >> 6 == 0b10, "variant bits of \(key)")
    }
  }

  @Test("a key survives its text, its header value, its bytes and Codable")
  func roundTrips() throws {
    let key = IdempotencyKey()
    #expect(IdempotencyKey(key.description) == key)
    #expect(IdempotencyKey(key.description.uppercased()) == key)
    #expect(IdempotencyKey(key.headerValue) == key)
    #expect(IdempotencyKey(bytes: key.bytes) == key)
    #expect(try JSONDecoder().decode(IdempotencyKey.self, from: JSONEncoder().encode(key)) == key)
    #expect(key.description == key.description.lowercased())
    #expect(key.headerValue == "\"\(key.description)\"")
    #expect(key.bytes.count == 16)
  }

  @Test("text that is not a UUID, and byte counts other than 16, are no key")
  func rejects() {
    for text in [
      "", "\"\"", "not-a-key", "\"8e2a0c1e-0000-4000-8000-00000000000\"", "8e2a0c1e00004000800000000000000a",
    ] {
      #expect(IdempotencyKey(text) == nil, "\(text)")
    }
    #expect(IdempotencyKey(bytes: [UInt8](repeating: 1, count: 15)) == nil)
    #expect(IdempotencyKey(bytes: [UInt8](repeating: 1, count: 17)) == nil)
    let fixed = IdempotencyKey("8E2A0C1E-0000-4000-8000-00000000000A")
    #expect(fixed?.description == "8e2a0c1e-0000-4000-8000-00000000000a")
  }
}
