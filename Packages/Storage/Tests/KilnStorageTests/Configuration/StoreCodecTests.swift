import Foundation
import KilnStorage
import Testing

@Suite("StoreCodec")
struct StoreCodecTests {
  // Found by Fuzz/StoreCodec: `String(data:encoding:)` dropped a leading byte order mark, so
  // a string stored by any store came back one character shorter.
  @Test("the automatic String codec reads back exactly the string stored, byte order mark included")
  func stringRoundTrip() throws {
    let codec = StoreCodec<String>.automatic
    for string in ["\u{FEFF}bom", "\u{FEFF}", "\u{FEFF}\u{FEFF}x", "plain", "", "é\u{0}✓"] {
      let bytes = try codec.encode(string)
      #expect(bytes == Data(string.utf8))
      #expect(try codec.decode(bytes) == string)
    }
  }

  @Test("the automatic String codec rejects bytes that are not UTF-8")
  func stringRejectsInvalidUTF8() {
    #expect(throws: DecodingError.self) { try StoreCodec<String>.automatic.decode(Data([0x61, 0xFF, 0x62])) }
  }

  @Test("the automatic Int codec writes what JSONEncoder writes, and reads it and JSON back")
  func intMatchesJSON() throws {
    let codec = StoreCodec<Int>.automatic
    for value in [0, 7, -42, Int.max, Int.min] {
      let bytes = try codec.encode(value)
      #expect(bytes == (try JSONEncoder().encode(value)))
      #expect(try codec.decode(bytes) == value)
    }
    #expect(try codec.decode(Data(" 12 ".utf8)) == 12, "whitespace JSON allows still decodes")
    #expect(throws: DecodingError.self) { try codec.decode(Data("twelve".utf8)) }
  }
}
