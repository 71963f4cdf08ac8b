import Foundation

extension HTTPRequest {
  /// The request as a `curl` command line, for debugging, with credentials redacted.
  ///
  /// ```swift
  /// print(request.curlCommand())
  /// // curl -X POST 'https://api.example.com/items' -H 'Authorization: <redacted>' \
  /// //   -H 'Content-Type: application/json' --data-binary '{"title":"Milk"}'
  /// ```
  ///
  /// `Authorization`, `Proxy-Authorization`, `Cookie` and `Set-Cookie` are always redacted.
  /// Every argument is single-quoted for a POSIX shell. A body that is not UTF-8 text is
  /// shown by its size; a file body as `@path`.
  ///
  /// - Parameter redacting: More headers to redact, in any case.
  /// - Returns: The command.
  public func curlCommand(redacting: Set<String> = []) -> String {
    var parts = ["curl"]
    // curl sends GET without a body and POST with one: name any other method.
    let impliedMethod: HTTPMethod = body == nil ? .get : .post
    if method != impliedMethod {
      parts.append("-X \(Self.quoted(method.rawValue))")
    }
    parts.append(Self.quoted(url.absoluteString))
    let redacted = HeaderRedaction.redact(headers, names: HeaderRedaction.names(adding: redacting))
    for field in redacted.fields {
      parts.append("-H \(Self.quoted("\(field.name): \(field.value)"))")
    }
    switch body {
    case .data(let data)?:
      if let text = String(data: data, encoding: .utf8) {
        parts.append("--data-binary \(Self.quoted(text))")
      } else {
        parts.append("--data-binary '<\(data.count) bytes>'")
      }
    case .file(let url)?:
      parts.append("--data-binary \(Self.quoted("@" + url.path))")
    case nil:
      break
    }
    return parts.joined(separator: " ")
  }

  /// `text` in single quotes, each `'` written as `'\''`.
  private static func quoted(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
  }
}
