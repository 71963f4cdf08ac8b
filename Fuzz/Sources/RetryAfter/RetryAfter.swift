// Fuzzes the `Retry-After` parser (`NetworkHandler.RetryPolicy.retryAfter(in:now:)` and the delay the
// policy derives from it), which reads a value any server may send.
//
// Invariant: never crash, never loop. Any value gives `nil` (absent or malformed) or a wait
// that is never negative; digits give exactly that many seconds (huge numbers are clamped,
// never overflow); an HTTP date gives the time until it, rounded up to the millisecond, or
// zero when past; and the policy never waits longer than its `maximumRetryAfter`.
//
// Input: eight bytes of "now" (seconds since 1970, within 1970...2100), then the value.

import Foundation
import FuzzSupport

@testable import KilnNetwork

@_cdecl("LLVMFuzzerTestOneInput")
public func test(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  var input = FuzzInput(data, size)
  let now = Date(timeIntervalSince1970: Double(input.uint64() % 4_102_444_800))
  let value = String(decoding: input.rest(), as: UTF8.self)
  let response = HTTPResponse(status: 503, headers: ["Retry-After": value])
  let trimmed = response.headers.first("Retry-After")!

  let wait = NetworkHandler.RetryPolicy.retryAfter(in: response, now: now)
  if let wait { fuzzCheck(wait >= .zero, "a negative wait \(wait) for \(value.debugDescription)") }
  if !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
    fuzzCheck(wait != nil, "digits \(trimmed) gave no wait")
    if let seconds = Int64(trimmed) {
      fuzzCheck(wait == .seconds(seconds), "\(trimmed) gave \(String(describing: wait))")
    }
  } else if let date = HTTPDate.parse(trimmed) {
    let seconds = date.timeIntervalSince(now)
    let expected: Duration = seconds > 0 ? .milliseconds(Int64((seconds * 1000).rounded(.up))) : .zero
    fuzzCheck(wait == expected, "the date \(trimmed) gave \(String(describing: wait)), not \(expected)")
  } else {
    fuzzCheck(
      wait == nil, "\(value.debugDescription) is neither digits nor a date but gave \(String(describing: wait))")
  }

  let policy = NetworkHandler.RetryPolicy(maxAttempts: 3, maximumRetryAfter: .seconds(60))
  let delay = policy.delay(after: .status(response), attempt: 1, now: now)
  fuzzCheck(delay >= .zero && delay <= .seconds(60) || wait == nil, "a delay of \(delay) for \(value.debugDescription)")
  return 0
}
