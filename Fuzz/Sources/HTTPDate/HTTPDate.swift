// Fuzzes the HTTP-date parser (`HTTPDate.parse`: IMF-fixdate, RFC 850 and asctime), which
// reads `Date`, `Expires`, `Last-Modified`, `If-Modified-Since` and `Retry-After` values.
//
// Invariant: never crash, never loop. Any text gives `nil` or a date in whole seconds that
// formats to an IMF-fixdate which parses back to the same date (a value that round-trips);
// and formatting any date of years 0...9999 gives text that parses back to it.
//
// Input: the text; its first eight bytes also make the date formatted.

import Foundation
import FuzzSupport

@testable import KilnNetwork

/// 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z, seconds since 1970.
private let earliest: Int64 = -62_167_219_200
private let latest: Int64 = 253_402_300_799

@_cdecl("LLVMFuzzerTestOneInput")
public func test(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  var input = FuzzInput(data, size)
  let bytes = input.rest()
  let text = String(decoding: bytes, as: UTF8.self)
  if let date = HTTPDate.parse(text) {
    let seconds = date.timeIntervalSince1970
    fuzzCheck(seconds == seconds.rounded(.down), "\(text) parsed to a fraction of a second")
    fuzzCheck(seconds >= Double(earliest) && seconds <= Double(latest) + 1, "\(text) parsed to \(seconds)")
    let formatted = HTTPDate.format(date)
    fuzzCheck(HTTPDate.parse(formatted) == date, "\(text) → \(formatted) does not parse back to \(seconds)")
    fuzzCheck(formatted.utf8.count == 29, "\(formatted) is not an IMF-fixdate")
  }
  var raw = FuzzInput(bytes)
  let span = UInt64(latest - earliest + 1)
  let seconds = earliest + Int64(raw.uint64() % span)
  let date = Date(timeIntervalSince1970: Double(seconds))
  let formatted = HTTPDate.format(date)
  fuzzCheck(HTTPDate.parse(formatted) == date, "\(seconds) formats to \(formatted), which does not parse back")
  return 0
}
