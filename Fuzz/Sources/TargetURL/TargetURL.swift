// Fuzzes URL building from targets (`TargetGroup.makeURL()`): arbitrary path segments and
// query names and values over a few base URLs.
//
// Invariant: never crash, never loop. The URL builds (every byte that needs it is
// percent-encoded, so no input makes an invalid URL) and round-trips: percent-decoding
// its path gives back the base path and every non-empty segment, percent-decoding its
// query gives back the base query and every name and value, in order; a trailing empty
// segment keeps a trailing `/`. (Exception: a lone bare parameter with an empty name makes
// an empty query, the same URL as none.)
//
// Input: a base selector, segments, then parameters (a name, a flag for a value, a value).

import Foundation
import FuzzSupport

@testable import KilnNetwork

private let bases: [(url: String, path: [String], query: String?)] = [
  ("https://api.example.com", [], nil),
  ("https://api.example.com/", [], nil),
  ("http://api.example.com:8080/v1", ["v1"], nil),
  ("https://api.example.com/v1/", ["v1"], nil),
  ("https://api.example.com/v1?key=abc#top", ["v1"], "key=abc"),
  ("HTTPS://user@api.example.com/a%20b/c", ["a%20b", "c"], nil),
]

struct Target: TargetGroup {
  var baseURL: URL
  var pathSegments: [String]
  var task: NetworkTask
  var path: String { pathSegments.joined(separator: "/") }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func test(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  var input = FuzzInput(data, size)
  let base = bases[Int(input.byte()) % bases.count]
  var segments: [String] = []
  for _ in 0..<Int(input.byte() % 6) { segments.append(input.string()) }
  var items: [QueryParameters.Item] = []
  for _ in 0..<Int(input.byte() % 6) {
    let name = input.string()
    items.append(QueryParameters.Item(name: name, value: input.byte() & 1 == 0 ? input.string() : nil))
  }
  let target = Target(
    baseURL: URL(string: base.url)!, pathSegments: segments,
    task: items.isEmpty ? .plain : .parameters(QueryParameters(items)))

  let url: URL
  do { url = try target.makeURL() } catch {
    fuzzCheck(false, "\(segments) and \(items) made no URL: \(error)")
    return 0
  }
  let text = url.absoluteString
  guard let components = URLComponents(string: text) else {
    fuzzCheck(false, "\(text) does not parse as URL components")
    return 0
  }
  fuzzCheck(components.fragment == nil, "\(text) has a fragment")

  // The path: the base's segments, then every non-empty segment, decoded.
  var path = components.percentEncodedPath
  let trailingSlash = path.hasSuffix("/")
  fuzzCheck(
    trailingSlash == (segments.count > 1 && segments.last == ""), "\(text): the trailing slash for \(segments)")
  if path.hasPrefix("/") { path.removeFirst() }
  if path.hasSuffix("/") { path.removeLast() }
  let decoded = path.isEmpty ? [] : path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
  let expected = base.path + segments.filter { !$0.isEmpty }
  fuzzCheck(decoded.count == expected.count, "\(text): \(decoded.count) segments, expected \(expected.count)")
  for (index, (segment, original)) in zip(decoded, expected).enumerated() {
    let value = index < base.path.count ? segment : segment.removingPercentEncoding
    fuzzCheck(value == original, "\(text): segment \(segment) decodes to \(value ?? "nil"), not \(original)")
  }

  // The query: the base's, then every parameter, decoded.
  var pairs = (components.percentEncodedQuery ?? "").split(separator: "&", omittingEmptySubsequences: false)
    .map(String.init)
  if pairs == [""] { pairs = [] }
  if let baseQuery = base.query {
    fuzzCheck(pairs.first == baseQuery, "\(text) lost the base query")
    pairs.removeFirst()
  }
  // A lone bare parameter with an empty name is an empty query, which URLs cannot tell
  // from no query: the one input that cannot round-trip.
  if pairs.isEmpty, items.count == 1, items[0].name.isEmpty, items[0].value == nil { return 0 }
  fuzzCheck(pairs.count == items.count, "\(text): \(pairs.count) parameters, expected \(items.count)")
  for (pair, item) in zip(pairs, items) {
    let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
    fuzzCheck(parts[0].removingPercentEncoding == item.name, "\(text): name \(parts[0]) is not \(item.name)")
    fuzzCheck(
      (parts.count > 1 ? parts[1].removingPercentEncoding : nil) == item.value,
      "\(text): value of \(pair) is not \(item.value ?? "nil")")
  }
  return 0
}
