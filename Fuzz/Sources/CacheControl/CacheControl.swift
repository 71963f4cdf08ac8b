// Fuzzes the `Cache-Control` parser (`CacheControl(parsing:)` and `CacheControl(_:)` over
// several field lines), and the `Cache-Status` member parser beside it.
//
// Invariant: never crash, never loop. Any field values give directives whose names are
// lowercased and non-empty and whose delta-seconds lie in 0...2³¹; parsing the field lines
// one by one or as headers agrees; and the directives, written back as `name="argument"`
// (for token names), parse to the same directives (a value that round-trips).
//
// Input: field values, each a length byte and its bytes.

import FuzzSupport

@testable import KilnNetwork

@_cdecl("LLVMFuzzerTestOneInput")
public func test(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  var input = FuzzInput(data, size)
  var values: [String] = []
  while !input.isAtEnd, values.count < 8 { values.append(input.string()) }

  var headers = HTTPHeaders()
  for (index, value) in values.enumerated() {
    headers.add(value, for: index % 2 == 0 ? "Cache-Control" : "cache-control")
  }
  let parsed = CacheControl(headers)
  if values.count == 1 {
    fuzzCheck(CacheControl(parsing: values[0]) == parsed, "one field parses differently from the header")
  }

  let range = 0...CacheControl.maximumDeltaSeconds
  for seconds in [
    parsed.maxAge, parsed.sharedMaxAge, parsed.maxStale, parsed.minFresh,
    parsed.staleWhileRevalidate, parsed.staleIfError,
  ] {
    if let seconds { fuzzCheck(range.contains(seconds), "a delta-seconds of \(seconds)") }
  }
  for directive in parsed.directives {
    fuzzCheck(!directive.name.isEmpty, "an empty directive name")
    fuzzCheck(directive.name == HTTPHeaders.canonicalName(directive.name), "directive \(directive.name) not lowercased")
    let shouted = String(
      decoding: directive.name.utf8.map { (0x61...0x7A).contains($0) ? $0 - 0x20 : $0 }, as: UTF8.self)
    fuzzCheck(parsed.contains(shouted), "contains(_:) misses \(directive.name)")
  }

  // Written back, the token-named directives parse the same.
  let tokens = parsed.directives.filter { isToken($0.name) }
  let written = tokens.map { directive in
    directive.argument.map { "\(directive.name)=\"\(escaped($0))\"" } ?? directive.name
  }.joined(separator: ", ")
  let reparsed = CacheControl(parsing: written)
  fuzzCheck(
    reparsed.directives.elementsEqual(tokens) { $0.name == $1.name && $0.argument == $1.argument },
    "\(written) parses to \(reparsed.directives), not \(tokens)")
  if tokens.count == parsed.directives.count {
    fuzzCheck(reparsed == parsed, "\(values) written back as \(written) parses differently")
  }

  // The Cache-Status members of the same values.
  for value in values {
    var members: [String] = []
    HTTPHeaders.splitList(value, into: &members)
    for member in members {
      if let status = HTTPCacheStatus(member: member) {
        fuzzCheck(!status.cache.isEmpty, "a Cache-Status without a cache name")
        _ = status.description
      }
    }
  }
  return 0
}

private func isToken(_ name: String) -> Bool {
  !name.isEmpty
    && name.utf8.allSatisfy { byte in
      (0x21...0x7E).contains(byte) && !"\"(),/:;<=>?@[\\]{}".utf8.contains(byte)
    }
}

/// `argument` with a backslash before each quote and backslash byte: the grammar is octets,
/// so a quote followed by a combining mark (one `Character`) is escaped too.
private func escaped(_ argument: String) -> String {
  var result: [UInt8] = []
  for byte in argument.utf8 {
    if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { result.append(UInt8(ascii: "\\")) }
    result.append(byte)
  }
  return String(decoding: result, as: UTF8.self)
}
