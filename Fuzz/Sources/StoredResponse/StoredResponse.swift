// Fuzzes the decoder of HTTPCache's entries (`StoredResponseCodec.decode`), which reads
// whatever the cache's KeyValueStore holds under a URL (a corrupt file, another program's
// value), then hands every decoded variant to the policy.
//
// Invariant: never crash, never loop. Any bytes are a `CorruptEntry` or variants that
// encode and decode back to the same variants (a value that round-trips), and on which
// the policy decides, serves and answers errors without trapping, with a freshness
// lifetime that is never NaN nor negative.
//
// Input: one mode byte, then the entry. Mode bit 0 writes the magic ("KHC", version 1)
// over the first bytes, so that mutations reach the variants.

import Foundation
import FuzzSupport

@testable import KilnNetwork

private let now = Date(timeIntervalSince1970: 1_700_000_000)
private let magic: [UInt8] = [0x4B, 0x48, 0x43, 0x01]

@_cdecl("LLVMFuzzerTestOneInput")
public func test(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  var input = FuzzInput(data, size)
  let mode = input.byte()
  var bytes = input.rest()
  if mode & 1 != 0 {
    for (index, byte) in magic.enumerated() where index < bytes.count { bytes[index] = byte }
  }
  guard let variants = try? StoredResponseCodec.decode(Data(bytes)) else { return 0 }
  let encoded = StoredResponseCodec.encode(variants)
  guard let again = try? StoredResponseCodec.decode(encoded) else {
    fuzzCheck(false, "decoded variants do not decode once encoded again")
    return 0
  }
  fuzzCheck(again == variants, "the variants changed through encoding")

  for policy in [HTTPCachePolicy(), HTTPCachePolicy(isShared: true)] {
    for stored in variants {
      let lifetime = policy.freshnessLifetime(of: stored)
      fuzzCheck(!lifetime.isNaN && lifetime >= 0, "a freshness lifetime of \(lifetime)")
      let request = HTTPRequest(url: stored.response.url ?? URL(string: "https://example.com/")!)
      _ = policy.decision(for: request, stored: stored, now: now)
      _ = policy.servedResponse(stored, now: now)
      _ = policy.staleResponse(for: request, stored: stored, afterErrorStatus: nil, now: now)
      _ = policy.staleResponse(for: request, stored: stored, afterErrorStatus: 503, now: now)
      _ = stored.matchesVary(of: request)
    }
  }
  return 0
}
