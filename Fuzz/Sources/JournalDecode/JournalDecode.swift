// Fuzzes the journal reader of SerializableCache (`Journal.decode` and the replay of its
// records into the cache's table), which reads whatever a crash, a disk or another program
// left in a `.kilncache` file.
//
// Invariant: never crash, never loop. Any bytes either are not a journal (`nil`, the file
// is set aside) or decode into records that all lie inside the bytes, end at `validLength`
// (the torn tail is cut there), and decode the same way again once cut. Every set record
// re-encodes to exactly its bytes (a value that round-trips), and a snapshot of the live
// entries (what compaction writes) replays to the same table.
//
// Input: one mode byte, then the file. Mode bit 0 prepends the journal header, bit 1 seals
// every record with its correct CRC-32, so that mutations reach the record parser instead
// of stopping at the checksum.

import Foundation
import FuzzSupport

@testable import KilnStorage

struct Payload: Codable, Hashable, Sendable {
  var id: Int
  var name: String
  var tags: [String]?
}

typealias Cache = SerializableCache<String, Payload>

@_cdecl("LLVMFuzzerTestOneInput")
public func test(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  var input = FuzzInput(data, size)
  let mode = input.byte()
  var bytes = input.rest()
  if mode & 1 != 0 { bytes = Journal.header + bytes }
  if mode & 2 != 0 { seal(&bytes) }

  guard let (records, validLength) = Journal.decode(bytes) else {
    fuzzCheck(
      bytes.count < Journal.header.count || !bytes.starts(with: Journal.header), "a journal header was rejected")
    return 0
  }
  fuzzCheck(
    validLength >= Journal.header.count && validLength <= bytes.count, "validLength \(validLength) out of range")
  for record in records {
    switch record {
    case .removeAll: break
    case .remove(let key):
      fuzzCheck(key.lowerBound >= Journal.header.count && key.upperBound <= validLength, "remove key out of range")
    case .set(let key, let storedAt, let expiresAt, let value, let range):
      fuzzCheck(
        range.lowerBound >= Journal.header.count && range.upperBound <= validLength && range.contains(key.lowerBound)
          && key.upperBound <= value.lowerBound && value.upperBound == range.upperBound,
        "set record ranges inconsistent")
      fuzzCheck(!storedAt.isNaN && !expiresAt.isNaN, "NaN timestamps accepted")
      let encoded = Journal.setRecord(
        key: Array(bytes[key]), value: Data(bytes[value]), storedAt: storedAt, expiresAt: expiresAt)
      fuzzCheck(encoded[...] == bytes[range], "a set record does not re-encode to its bytes")
      fuzzCheck(Journal.key(ofSetRecord: encoded) == bytes[key], "key(ofSetRecord:) disagrees with the decoder")
    }
  }

  // Cutting the torn tail (what load does) leaves a journal that decodes to the same records.
  let cut = Array(bytes[..<validLength])
  guard let (again, againLength) = Journal.decode(cut) else {
    fuzzCheck(false, "the cut journal is no longer a journal")
    return 0
  }
  fuzzCheck(againLength == validLength && again.count == records.count, "the cut journal decodes differently")

  // Replay, then replay a snapshot of the live entries: the same table.
  var table = LRUTable<String, Cache.Stored>()
  _ = Cache.replay(records, from: bytes, into: &table, .automatic, .automatic)
  var snapshot = Journal.header
  for node in table.entriesOldestFirst { snapshot += node.value.record }
  guard let (snapshotRecords, snapshotLength) = Journal.decode(snapshot) else {
    fuzzCheck(false, "a snapshot is not a journal")
    return 0
  }
  fuzzCheck(snapshotLength == snapshot.count && snapshotRecords.count == table.count, "a snapshot lost records")
  var replayed = LRUTable<String, Cache.Stored>()
  let undecodable = Cache.replay(snapshotRecords, from: snapshot, into: &replayed, .automatic, .automatic)
  fuzzCheck(undecodable == 0, "a snapshot holds undecodable records")
  let before = table.entriesOldestFirst
  let after = replayed.entriesOldestFirst
  fuzzCheck(before.count == after.count, "the snapshot replays to another count")
  for (lhs, rhs) in zip(before, after) {
    fuzzCheck(
      lhs.key == rhs.key && lhs.value.value == rhs.value.value && lhs.value.record == rhs.value.record
        && lhs.storedAt == rhs.storedAt && lhs.expiresAt == rhs.expiresAt,
      "the snapshot replays to another entry for \(lhs.key)")
  }
  return 0
}

/// Rewrites each record's checksum, as far as the lengths lead.
private func seal(_ bytes: inout [UInt8]) {
  var offset = Journal.header.count
  while bytes.count - offset >= Journal.recordOverhead {
    let length = bytes[offset..<offset + 4].reversed().reduce(0) { $0 << 8 | Int($1) }
    let start = offset + Journal.recordOverhead
    guard length <= bytes.count - start else { return }
    let checksum = CRC32.checksum(Array(bytes[start..<start + length]))
    for index in 0..<4 { bytes[offset + 4 + index] = UInt8(truncatingIfNeeded: checksum >> (8 * index)) }
    offset = start + length
  }
}
