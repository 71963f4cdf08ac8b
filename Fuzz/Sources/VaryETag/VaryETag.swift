// Fuzzes the `Vary` and `ETag` parsing of the HTTP cache: the list splitting behind `Vary`
// (`HTTPHeaders.listElements(for:)`), `StoredHTTPResponse`'s Vary names and its matching of
// requests, and the entity-tag comparisons of `If-None-Match` and of a `304` update.
//
// Invariant: never crash, never loop. List elements are trimmed and non-empty, and joining
// them with ", " splits back to the same elements (a value that round-trips). A stored
// response always matches the request it was stored for (unless `Vary: *`), and never a
// request that differs in a field it varies on. A valid entity tag in `If-None-Match`
// always matches the same tag (weakly), so a fresh hit answers `304`; and a `304` with the
// stored tag always updates the stored response.
//
// Input: a Vary value, request field lines (name, value), an ETag, an If-None-Match value.

import Foundation
import FuzzSupport

@testable import KilnNetwork

private let url = URL(string: "https://example.com/item")!
private let time = Date(timeIntervalSince1970: 1_700_000_000)

@_cdecl("LLVMFuzzerTestOneInput")
public func test(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  var input = FuzzInput(data, size)
  let vary = input.string()
  var requestHeaders = HTTPHeaders()
  for _ in 0..<Int(input.byte() % 5) { requestHeaders.add(input.string(), for: input.string()) }
  let etag = input.string()
  let noneMatch = input.string()

  // Lists.
  let elements = HTTPHeaders([("Vary", vary)]).listElements(for: "Vary")
  for element in elements {
    fuzzCheck(
      !element.isEmpty && element == HTTPHeaders.trimmingWhitespace(element), "element \(element.debugDescription)")
  }
  let joined = elements.joined(separator: ", ")
  let again = HTTPHeaders([("Vary", joined)]).listElements(for: "Vary")
  fuzzCheck(again == elements, "\(vary.debugDescription) split to \(elements), rejoined to \(again)")

  // Vary matching.
  let request = HTTPRequest(url: url, headers: requestHeaders)
  let response = HTTPResponse(status: 200, headers: ["Vary": vary, "Cache-Control": "max-age=60"], url: url)
  let stored = StoredHTTPResponse(response: response, requestTime: time, responseTime: time, request: request)
  let variesOnEverything = stored.varyNames.contains("*")
  fuzzCheck(stored.matchesVary(of: request) == !variesOnEverything, "a response does not match its own request")
  for name in stored.varyNames where name != "*" && !name.isEmpty {
    var other = request
    other.headers.add("fuzz-\(other.headers.count)", for: name)
    fuzzCheck(!stored.matchesVary(of: other), "a request with another \(name) matched")
  }

  // Entity tags.
  let policy = HTTPCachePolicy()
  var tagged = response
  tagged.headers = ["Cache-Control": "max-age=60", "ETag": etag]
  let taggedStored = StoredHTTPResponse(response: tagged, requestTime: time, responseTime: time)
  let trimmedTag = tagged.headers.first("ETag")!
  if isEntityTag(trimmedTag) {
    var conditional = HTTPRequest(url: url, headers: ["If-None-Match": trimmedTag])
    let answer = policy.answeringPreconditions(of: conditional, with: tagged)
    fuzzCheck(answer.status == 304, "If-None-Match: \(trimmedTag) does not match ETag: \(trimmedTag)")
    conditional.headers = [
      "If-None-Match": "W/\(trimmedTag.hasPrefix("W/") ? String(trimmedTag.dropFirst(2)) : trimmedTag)"
    ]
    fuzzCheck(
      policy.answeringPreconditions(of: conditional, with: tagged).status == 304, "a weak If-None-Match does not match")
    let notModified = HTTPResponse(status: 304, headers: ["ETag": trimmedTag])
    fuzzCheck(
      policy.updating(taggedStored, with: notModified, requestTime: time, responseTime: time) != nil,
      "a 304 with the stored ETag \(trimmedTag) does not update it")
    let revalidation = policy.conditionalRequest(for: HTTPRequest(url: url), revalidating: taggedStored)
    fuzzCheck(revalidation.headers.first("If-None-Match") == trimmedTag, "the conditional request lost the tag")
  }
  let conditional = HTTPRequest(url: url, headers: ["If-None-Match": noneMatch])
  let answer = policy.answeringPreconditions(of: conditional, with: tagged)
  fuzzCheck(answer.status == 200 || answer.status == 304, "answering preconditions gave \(answer.status)")
  if answer.status == 304 { fuzzCheck(answer.body.isEmpty, "a 304 with a body") }
  _ = policy.updating(
    taggedStored, with: HTTPResponse(status: 304, headers: ["ETag": noneMatch]), requestTime: time, responseTime: time)
  return 0
}

/// `[W/] DQUOTE *etagc DQUOTE` (RFC 9110 §8.8.3).
private func isEntityTag(_ text: String) -> Bool {
  var bytes = Array(text.utf8)[...]
  if bytes.starts(with: "W/".utf8) { bytes = bytes.dropFirst(2) }
  guard bytes.count >= 2, bytes.first == 0x22, bytes.last == 0x22 else { return false }
  return bytes.dropFirst().dropLast().allSatisfy { $0 == 0x21 || (0x23...0x7E).contains($0) || $0 >= 0x80 }
}
