// Fuzzes the reader of DiskCache's entry files (`EntryFile.decode` and `EntryFile.header`),
// which reads whatever a crash, a disk or another program left in the cache directory.
//
// Invariant: never crash, never loop. Any bytes are `corrupt`, `otherKey` or an entry whose
// value lies inside the file and which re-encodes to exactly the file's bytes (a value that
// round-trips). The header read from the file's first 36 bytes alone (what expiry sweeps
// read) agrees with the whole file's, and rejects every size but the file's own.
//
// Input: one mode byte, then the file. Mode bit 0 writes the magic and version over the
// first bytes, bit 1 fixes the trailing CRC-32, bit 2 expects the key the header names
// (else the key "key"), so that mutations get past the cheap checks.

import FuzzSupport

@testable import KilnStorage

@_cdecl("LLVMFuzzerTestOneInput")
public func test(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  var input = FuzzInput(data, size)
  let mode = input.byte()
  let sizeDelta = Int(Int8(bitPattern: input.byte()))
  var bytes = input.rest()
  if mode & 1 != 0 {
    for (index, byte) in (EntryFile.magic + [EntryFile.version]).enumerated() where index < bytes.count {
      bytes[index] = byte
    }
  }
  if mode & 2 != 0, bytes.count >= 4 {
    let checksum = CRC32.checksum(Array(bytes[..<(bytes.count - 4)]))
    for index in 0..<4 { bytes[bytes.count - 4 + index] = UInt8(truncatingIfNeeded: checksum >> (8 * index)) }
  }

  let header = bytes.withUnsafeBytes { EntryFile.header($0) }
  var expectedKey = Array("key".utf8)
  if mode & 4 != 0, let header, bytes.count >= EntryFile.headerSize + header.keyLength {
    expectedKey = Array(bytes[EntryFile.headerSize..<EntryFile.headerSize + header.keyLength])
  }

  // The header from the first bytes only, against the file's size, and against another size.
  let prefix = Array(bytes.prefix(EntryFile.headerSize))
  let prefixHeader = prefix.withUnsafeBytes { EntryFile.header($0, fileSize: bytes.count) }
  fuzzCheck(
    prefixHeader?.keyLength == header?.keyLength && prefixHeader?.valueLength == header?.valueLength
      && prefixHeader?.storedAt == header?.storedAt && prefixHeader?.expiresAt == header?.expiresAt,
    "the header of the first bytes differs from the whole file's")
  if sizeDelta != 0,
    let other = prefix.withUnsafeBytes({ EntryFile.header($0, fileSize: max(0, bytes.count + sizeDelta)) })
  {
    fuzzCheck(
      bytes.count + sizeDelta == EntryFile.overhead + other.keyLength + other.valueLength,
      "a header accepted a file size it does not describe")
  }
  if let header {
    fuzzCheck(
      header.keyLength >= 0 && header.valueLength >= 0 && !header.storedAt.isNaN && !header.expiresAt.isNaN
        && EntryFile.overhead + header.keyLength + header.valueLength == bytes.count,
      "an accepted header does not describe the file")
  }

  switch EntryFile.decode(bytes, expectedKey: expectedKey) {
  case .corrupt:
    break
  case .otherKey:
    fuzzCheck(header != nil, "a file without a valid header is another key's")
  case .entry(let storedAt, let expiresAt, let value):
    fuzzCheck(header != nil, "a file without a valid header decoded")
    fuzzCheck(
      value.lowerBound == EntryFile.headerSize + expectedKey.count && value.upperBound == bytes.count - 4,
      "the value range is not where the format puts it")
    let encoded = EntryFile.encode(
      key: expectedKey, value: Array(bytes[value]), storedAt: storedAt, expiresAt: expiresAt)
    fuzzCheck(encoded == bytes, "an entry does not re-encode to its file")
  }
  return 0
}
