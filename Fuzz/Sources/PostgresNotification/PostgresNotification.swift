// Fuzzes the parser of `PostgresStore`'s change notifications (`PostgresCacheNotification`),
// which reads every `NOTIFY` payload on the store's channel: any client of the database may
// send one.
//
// The parser lives behind the `PostgreSQL` trait, and building postgres-nio with the fuzzer's
// sanitizers would cost CI minutes for 60 lines of Kiln code. So this target compiles the
// parser's own source file (`PostgresCacheNotification.swift` here is a symbolic link to
// KilnStorage's) with `PostgreSQL` defined, and needs no Kiln module.
//
// Invariant: never crash, never loop. The node is everything before the first space (none:
// empty), never containing one. A change is either every key, or one key whose lowercase hex
// is exactly the payload after " k"; a payload that a store writes for a key (`<node> k` and
// the key's lowercase hex, as PostgreSQL's `encode(key, 'hex')` gives) parses back to that
// node and key; anything else drops everything, which is always safe.
//
// Input: the payload as UTF-8, the first byte choosing between an arbitrary payload (even)
// and one a store writes for the remaining bytes as a key (odd).

import Foundation
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func test(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  var input = FuzzInput(data, size)
  if input.byte() % 2 == 0 {
    checkArbitrary(String(decoding: input.rest(), as: UTF8.self))
  } else {
    let nodeLength = Int(input.byte() % 16)
    let node = String(decoding: input.bytes(nodeLength).map { $0 % 26 + UInt8(ascii: "a") }, as: UTF8.self)
    let key = Data(input.rest())
    let parsed = PostgresCacheNotification(payload: "\(node) k\(hex(key))")
    fuzzCheck(parsed.node == node, "the node \(node) read back as \(parsed.node)")
    fuzzCheck(parsed.change == .key(key), "the key \(hex(key)) read back as \(parsed.change)")
  }
  return 0
}

private func checkArbitrary(_ payload: String) {
  let parsed = PostgresCacheNotification(payload: payload)
  guard let space = payload.firstIndex(of: " ") else {
    fuzzCheck(
      parsed.node.isEmpty && parsed.change == .everything, "no space, yet \(parsed) from \(payload.debugDescription)")
    return
  }
  fuzzCheck(parsed.node == payload[..<space], "the node of \(payload.debugDescription) read as \(parsed.node)")
  fuzzCheck(!parsed.node.contains(" "), "the node \(parsed.node.debugDescription) holds a space")
  if case .key(let key) = parsed.change {
    let body = payload.utf8[payload.utf8.index(after: space)...]
    fuzzCheck(
      Array(body) == Array("k\(hex(key))".utf8),
      "\(payload.debugDescription) named the key \(hex(key)), which is not its body")
  }
}

private func hex(_ bytes: Data) -> String {
  let digits = Array("0123456789abcdef".utf8)
  var text = [UInt8]()
  text.reserveCapacity(bytes.count * 2)
  for byte in bytes {
    text.append(digits[Int(byte >> 4)])
    text.append(digits[Int(byte & 0x0f)])
  }
  return String(decoding: text, as: UTF8.self)
}
