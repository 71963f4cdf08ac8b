// Fuzzes the envelope of outbox records (`OutboxEnvelope.decode`), which reads whatever a
// crash, a disk or another program left in an outbox's SQLite rows before a write is sent.
//
// Invariant: never crash, never loop. Any bytes either are refused (a `Damage`) or decode to
// a record with a valid channel that re-encodes to exactly the same bytes: no two byte
// strings load as one write, and no damaged record loads as another write.
//
// Input: one mode byte, then the envelope. Mode bit 0 replaces the last four bytes with the
// correct CRC-32 of the rest, so that mutations reach the field parser instead of stopping
// at the checksum.

import Foundation
import FuzzSupport

@testable import KilnStorage

@_cdecl("LLVMFuzzerTestOneInput")
public func test(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  var input = FuzzInput(data, size)
  let mode = input.byte()
  var bytes = input.rest()
  if mode & 1 != 0, bytes.count >= 4 {
    let checksum = CRC32.checksum(Array(bytes.dropLast(4)))
    for index in 0..<4 { bytes[bytes.count - 4 + index] = UInt8(truncatingIfNeeded: checksum >> (8 * index)) }
  }
  switch OutboxEnvelope.decode(Data(bytes)) {
  case .failure:
    break
  case .success(let record):
    fuzzCheck(OutboxEnvelope.isValid(channel: record.channel), "a decoded channel is invalid")
    let encoded = try? OutboxEnvelope.encode(record)
    fuzzCheck(encoded == Data(bytes), "a decoded record re-encodes to other bytes")
  }
  return 0
}
