// Fuzzes StoreCodec's decoding, the path every persistent store decodes a stored value
// through: DiskCache, SerializableCache, SQLiteStore (a row's `value` blob goes straight to
// `valueCodec.decode`) and PostgresStore (postgres-nio decodes the row's `bytea`, then the
// same `valueCodec.decode`), so this one target covers the value decoding of all of them
// without a database.
//
// Invariant: never crash, never loop. Any bytes decode to a typed error or to a value that
// round-trips: encoding it and decoding the result gives the same value, for `.automatic`
// (raw `Data`, UTF-8 `String`, sorted-keys JSON) and `.propertyList`; and any string, stored
// and read back, is the same string.
//
// Input: one selector byte (which codec and type), then the stored bytes.

import Foundation
import FuzzSupport

@testable import KilnStorage

struct Article: Codable, Hashable, Sendable {
  var id: Int
  var title: String
  var score: Double?
  var tags: [String]
  var metadata: [String: Int]?
  var flag: Bool?
}

@_cdecl("LLVMFuzzerTestOneInput")
public func test(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  var input = FuzzInput(data, size)
  let selector = input.byte()
  let bytes = Data(input.rest())
  switch selector % 6 {
  case 0: roundTrip(bytes, StoreCodec<Data>.automatic)
  case 1:
    roundTrip(bytes, StoreCodec<String>.automatic)
    // And from the value's side: any string survives a store.
    let string = String(decoding: bytes, as: UTF8.self)
    let stored = try? StoreCodec<String>.automatic.decode(StoreCodec<String>.automatic.encode(string))
    fuzzCheck(stored == string, "the string \(string.debugDescription) came back as \(stored.debugDescription)")
  case 2: roundTrip(bytes, StoreCodec<Article>.automatic)
  case 3: roundTrip(bytes, StoreCodec<[String: [Int]]>.automatic)
  case 4: roundTrip(bytes, StoreCodec<Article>.propertyList)
  default: roundTrip(bytes, StoreCodec<[String]>.propertyList)
  }
  return 0
}

private func roundTrip<Value: Equatable>(_ bytes: Data, _ codec: StoreCodec<Value>) {
  guard let value = try? codec.decode(bytes) else { return }
  let encoded: Data
  do { encoded = try codec.encode(value) } catch {
    fuzzCheck(false, "a decoded \(Value.self) does not encode: \(error)")
    return
  }
  let decoded: Value
  do { decoded = try codec.decode(encoded) } catch {
    fuzzCheck(false, "an encoded \(Value.self) does not decode: \(error)")
    return
  }
  fuzzCheck(decoded == value, "\(Value.self) does not round-trip: \(value) became \(decoded)")
}
