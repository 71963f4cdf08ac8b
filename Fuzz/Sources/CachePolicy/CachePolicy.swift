// Fuzzes the HTTP cache policy (RFC 9111) on arbitrary stored and new headers: what may be
// stored, what to do with a request, the response served, a `304` update and the stale
// answer after an error, for a private and a shared cache. The exchange times come from
// the input as any finite values, as `StoredResponseCodec` accepts them from a stored entry;
// "now" is a realistic date.
//
// Invariant: never crash, never loop. Freshness lifetimes and ages are never NaN nor
// negative (an age is infinite for stored times ~1e308 apart: stale, as it should be); a
// response the policy stores is one it says it can store; a served response has a whole,
// non-negative `Age` and a `Cache-Status`; a forwarded request keeps the method and URL; a
// `304` the cache answers for a stored 2xx has no body; the same inputs decide the same.
//
// Input: flags, three times, then header field lines for the request, the response and a
// `304`, each field a name and a value.

import Foundation
import FuzzSupport

@testable import KilnNetwork

private let url = URL(string: "https://example.com/a/b?c=d")!

@_cdecl("LLVMFuzzerTestOneInput")
public func test(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  var input = FuzzInput(data, size)
  let flags = input.byte()
  let requestTime = finite(input.uint64())
  let responseTime = finite(input.uint64())
  let now = Date(timeIntervalSince1970: Double(input.uint64() % 4_102_444_800))
  let statuses = [200, 203, 204, 206, 301, 304, 404, 500, 503, 504]
  let status = statuses[Int(input.byte()) % statuses.count]
  var request = HTTPRequest(method: flags & 1 == 0 ? .get : .post, url: url, headers: fields(&input))
  if flags & 2 != 0 { request.method = .head }
  let response = HTTPResponse(status: status, headers: fields(&input), body: Data("body".utf8), url: url)
  let notModified = HTTPResponse(status: 304, headers: fields(&input))

  for policy in [HTTPCachePolicy(), HTTPCachePolicy(isShared: true, maximumHeuristicLifetime: 86_400)] {
    let canStore = policy.canStore(response, for: request)
    let stored = policy.storedResponse(response, for: request, requestTime: requestTime, responseTime: responseTime)
    fuzzCheck((stored != nil) == canStore, "storedResponse disagrees with canStore")
    // Whether or not it may be stored, decide as if it were (a stale entry of another policy).
    let candidate =
      stored
      ?? StoredHTTPResponse(
        response: response, requestTime: requestTime, responseTime: responseTime, request: request)
    check(policy, candidate, request: request, now: now)
    if let updated = policy.updating(candidate, with: notModified, requestTime: requestTime, responseTime: now) {
      check(policy, updated, request: request, now: now)
    }
    for errorStatus in [nil, 500, 503, 404] as [Int?] {
      if let stale = policy.staleResponse(for: request, stored: candidate, afterErrorStatus: errorStatus, now: now) {
        checkServed(stale, policy: policy, storedStatus: candidate.response.status)
      }
    }
    _ = policy.invalidatedURLs(for: request, response: response)
    // A POST's response kept for later GETs is one the policy could store for a GET.
    if let (kept, get) = policy.storedResponse(
      forLaterGETs: response, to: request, requestTime: requestTime, responseTime: responseTime)
    {
      fuzzCheck(request.method == .post && [200, 203].contains(kept.response.status), "a POST response kept wrongly")
      fuzzCheck(get.method == .get && policy.canStore(response, for: get), "kept a response a GET could not store")
    }
  }
  // Two partials combine only into a 200 holding the whole representation.
  if let combined = HTTPCachePolicy.combining(response, with: response) {
    fuzzCheck(combined.status == 200 && combined.headers["Content-Range"] == nil, "a combined \(combined.status)")
  }
  return 0
}

private func check(_ policy: HTTPCachePolicy, _ stored: StoredHTTPResponse, request: HTTPRequest, now: Date) {
  let lifetime = policy.freshnessLifetime(of: stored)
  let age = policy.currentAge(of: stored, at: now)
  // Stored times far apart (a corrupt entry) make an infinite age: infinitely old, so
  // stale, which is the right answer; never NaN and never negative.
  fuzzCheck(!lifetime.isNaN && lifetime >= 0, "a freshness lifetime of \(lifetime)")
  fuzzCheck(!age.isNaN && age >= 0, "an age of \(age)")
  let decision = policy.decision(for: request, stored: stored, now: now)
  fuzzCheck(decision == policy.decision(for: request, stored: stored, now: now), "two decisions differ")
  switch decision {
  case .serve(let response):
    checkServed(response, policy: policy, storedStatus: stored.response.status)
    // A range served from the store is exactly the bytes its Content-Range names.
    if response.status == 206, request.headers.contains("Range") {
      fuzzCheck(HTTPCachePolicy.contentRange(of: response) != nil, "a 206 whose body is not its Content-Range")
    }
  case .serveStale(let response, let revalidation):
    checkServed(response, policy: policy, storedStatus: stored.response.status)
    fuzzCheck(revalidation.url == request.url && revalidation.method == request.method, "the revalidation changed")
  case .forward(let forwarded, _):
    fuzzCheck(forwarded.url == request.url && forwarded.method == request.method, "the forwarded request changed")
  case .generate(let response):
    fuzzCheck(response.status == 504, "a generated \(response.status)")
  }
  checkServed(policy.servedResponse(stored, now: now), policy: policy, storedStatus: stored.response.status)
  _ = policy.conditionalRequest(for: request, revalidating: stored)
  _ = policy.hasValidators(stored)
}

private func checkServed(_ response: HTTPResponse, policy: HTTPCachePolicy, storedStatus: Int) {
  // A 304 the cache answers itself (the request's own preconditions) has no body.
  if response.status == 304 && storedStatus != 304 { fuzzCheck(response.body.isEmpty, "a 304 with a body") }
  let age = response.headers.first("Age")
  fuzzCheck(age.flatMap { Int($0) }.map { $0 >= 0 } == true, "a served response with Age \(age ?? "nil")")
  let status = response.headers.values(for: "Cache-Status").last.flatMap(HTTPCacheStatus.init(member:))
  fuzzCheck(status?.cache == HTTPCacheStatus.kilnCacheName, "a served response without its Cache-Status")
}

/// Any finite time, as a stored entry may hold.
private func finite(_ bits: UInt64) -> Date {
  let value = Double(bitPattern: bits)
  return Date(timeIntervalSince1970: value.isFinite ? value : Double(bits % 4_102_444_800))
}

private func fields(_ input: inout FuzzInput) -> HTTPHeaders {
  let names = [
    "Cache-Control", "Date", "Age", "Expires", "Last-Modified", "ETag", "Vary", "Pragma", "Authorization", "Range",
    "If-None-Match", "If-Modified-Since", "Connection", "Content-Length", "Location", "Accept",
  ]
  var headers = HTTPHeaders()
  for _ in 0..<Int(input.byte() % 8) {
    let selector = Int(input.byte())
    let name = selector < 240 ? names[selector % names.count] : input.string()
    headers.add(input.string(), for: name)
  }
  return headers
}
