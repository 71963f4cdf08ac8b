// Fuzzes the parser of DiskCache's index: the file names of a cache directory, each of which
// `KeyDigest(fileName:)` turns into the digest of an entry or rejects (temporary files,
// foreign files, anything a user or another program put there).
//
// Invariant: never crash, never loop. A name is either rejected or is exactly the file name
// of the digest it parses to (a value that round-trips), and every digest's file name
// parses back to it. Input: the name's bytes.

import FuzzSupport

@testable import KilnStorage

@_cdecl("LLVMFuzzerTestOneInput")
public func test(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  var input = FuzzInput(data, size)
  let bytes = input.rest()
  let name = String(decoding: bytes, as: UTF8.self)
  if let digest = KeyDigest(fileName: name) {
    fuzzCheck(digest.fileName == name, "\(name) parsed to a digest named \(digest.fileName)")
  }
  if let digest = KeyDigest(fileName: name[...]) {
    fuzzCheck(digest.fileName == name, "the substring \(name) parsed to a digest named \(digest.fileName)")
  }
  // The digest of the input as a key's bytes, and a digest made of its first 16 bytes.
  let hashed = KeyDigest.sha256(bytes)
  fuzzCheck(KeyDigest(fileName: hashed.fileName) == hashed, "a SHA-256 digest's name does not parse back")
  var raw = FuzzInput(bytes)
  let made = KeyDigest(high: raw.uint64(), low: raw.uint64())
  fuzzCheck(KeyDigest(fileName: made.fileName) == made, "a digest's name does not parse back")
  fuzzCheck(made.fileName.utf8.count == 32, "a digest's name is not 32 characters")
  return 0
}
