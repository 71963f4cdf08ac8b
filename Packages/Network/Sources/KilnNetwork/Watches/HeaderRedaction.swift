/// Which header values never appear in logs or `curl` renderings.
enum HeaderRedaction {
  /// What a redacted value is replaced with.
  static let placeholder = "<redacted>"

  /// The headers always redacted: `Authorization`, `Proxy-Authorization`, `Cookie` and
  /// `Set-Cookie`.
  static let alwaysRedacted: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie"]

  /// The lowercased names to redact: the ones always redacted and `extra`.
  static func names(adding extra: some Sequence<String>) -> Set<String> {
    alwaysRedacted.union(extra.map(HTTPHeaders.canonicalName))
  }

  /// `headers` with the value of every field named in `names` (lowercased) replaced.
  static func redact(_ headers: HTTPHeaders, names: Set<String>) -> HTTPHeaders {
    HTTPHeaders(
      headers.fields.map { field in
        names.contains(HTTPHeaders.canonicalName(field.name))
          ? HTTPHeaders.Field(name: field.name, value: placeholder) : field
      }
    )
  }
}
