// Fuzzes multipart encoding (`MultipartFormData.encoded()`): arbitrary names, file names,
// content types, contents and boundaries.
//
// Invariant: never crash, never loop. The form encodes to a typed error
// (`NetworkError.encodingFailed`) or to a body that round-trips: parsed as RFC 2046
// multipart with the form's boundary it gives back every part, in order, with its name and
// file name (quotes, CR and LF escaped as `%22`, `%0D`, `%0A`), its content type and its
// exact bytes, and nothing else.
//
// Input: a boundary (or the default), then parts: name, flags, file name, content type,
// contents.

import Foundation
import FuzzSupport

@testable import KilnNetwork

@_cdecl("LLVMFuzzerTestOneInput")
public func test(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  var input = FuzzInput(data, size)
  let boundaryFlag = input.byte()
  let boundary = boundaryFlag & 1 == 0 ? "kiln-boundary-0123" : input.string()
  var parts: [MultipartFormData.Part] = []
  for _ in 0..<Int(input.byte() % 5) {
    let name = input.string()
    let flags = input.byte()
    let filename = flags & 1 != 0 ? input.string() : nil
    let contentType = flags & 2 != 0 ? input.string() : nil
    let content = Data(input.chunk())
    parts.append(
      flags & 4 != 0 && filename == nil && contentType == nil
        ? .field(name, String(decoding: content, as: UTF8.self))
        : .data(name, content, filename: filename, contentType: contentType))
  }
  let form = MultipartFormData(parts, boundary: boundary)
  let body: Data
  do { body = try form.encoded() } catch {
    guard case .encodingFailed = error else {
      fuzzCheck(false, "an error that is not encodingFailed: \(error)")
      return 0
    }
    return 0
  }
  fuzzCheck(form.contentType == "multipart/form-data; boundary=\(boundary)", "the content type")
  let parsed = parse(Array(body), boundary: Array(boundary.utf8))
  guard let parsed else {
    fuzzCheck(false, "the body of \(parts.count) parts with boundary \(boundary.debugDescription) does not parse")
    return 0
  }
  fuzzCheck(parsed.count == parts.count, "\(parts.count) parts came back as \(parsed.count)")
  for (part, back) in zip(parts, parsed) {
    var expectedHeaders = [
      "Content-Disposition: form-data; name=\"\(quoted(part.name))\""
        + (part.filename.map { "; filename=\"\(quoted($0))\"" } ?? "")
    ]
    if let contentType = part.contentType { expectedHeaders.append("Content-Type: \(contentType)") }
    fuzzCheck(back.headers == expectedHeaders, "part headers \(back.headers) are not \(expectedHeaders)")
    guard case .data(let content) = part.content else { continue }
    fuzzCheck(back.content == Array(content), "the content of part \(part.name.debugDescription) changed")
  }
  return 0
}

private func quoted(_ text: String) -> String {
  text.replacingOccurrences(of: "\"", with: "%22").replacingOccurrences(of: "\r", with: "%0D")
    .replacingOccurrences(of: "\n", with: "%0A")
}

/// A strict RFC 2046 reader: `--boundary`, then parts separated by `CRLF--boundary`, each
/// header lines ending in CRLF, an empty line and the content; `--boundary--CRLF` closes.
private func parse(_ body: [UInt8], boundary: [UInt8]) -> [(headers: [String], content: [UInt8])]? {
  let dash = Array("--".utf8)
  let crlf = Array("\r\n".utf8)
  let delimiter = dash + boundary
  guard body.starts(with: delimiter) else { return nil }
  var position = delimiter.count
  var parts: [(headers: [String], content: [UInt8])] = []
  while true {
    let rest = body[position...]
    if rest.elementsEqual(dash + crlf) { return parts }
    guard rest.starts(with: crlf) else { return nil }
    position += 2
    guard let end = find(crlf + delimiter, in: body, from: position) else { return nil }
    let part = Array(body[position..<end])
    guard let split = find(crlf + crlf, in: part, from: 0) else { return nil }
    let headerBytes = part[..<split]
    let headers = headerBytes.split(separator: crlf, omittingEmptySubsequences: false)
    parts.append((headers.map { String(decoding: $0, as: UTF8.self) }, Array(part[(split + 4)...])))
    position = end + 2 + delimiter.count
  }
}

private func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
  guard needle.count <= haystack.count else { return nil }
  var index = start
  while index + needle.count <= haystack.count {
    if haystack[index..<index + needle.count].elementsEqual(needle) { return index }
    index += 1
  }
  return nil
}
