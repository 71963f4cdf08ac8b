import Foundation

/// A watch that logs every attempt — the request, then the response or error — with
/// credentials redacted.
///
/// ```swift
/// let handler = NetworkHandler(transport: transport, watches: [LoggingWatch(redacting: ["X-Api-Key"])])
/// // → GET https://api.example.com/items?page=2 (attempt 1)
/// //   Authorization: <redacted>
/// //   X-Api-Key: <redacted>
/// // ← 200 https://api.example.com/items?page=2 (attempt 1, 1532 bytes)
/// //   Content-Type: application/json
/// ```
///
/// `Authorization`, `Proxy-Authorization`, `Cookie` and `Set-Cookie` are always redacted, and
/// so is every header named in ``redactedHeaders``. Bodies are not logged.
public struct LoggingWatch: NetworkWatch {
  /// The names, lowercased, of the headers whose values are replaced by `<redacted>`.
  public let redactedHeaders: Set<String>

  /// Whether header fields are logged, not only the first line.
  public let logsHeaders: Bool

  private let log: @Sendable (String) -> Void
  /// Whether an entry would be kept, asked before one is formatted (a logger's level).
  private let isEnabled: @Sendable () -> Bool

  /// Creates a logging watch.
  ///
  /// - Parameters:
  ///   - redacting: More headers to redact, in any case, besides the credentials always
  ///     redacted.
  ///   - logsHeaders: Whether header fields are logged; `true` by default.
  ///   - log: Where each entry goes; `print` by default.
  public init(
    redacting: Set<String> = [],
    logsHeaders: Bool = true,
    log: @escaping @Sendable (String) -> Void = { print($0) }
  ) {
    self.init(redacting: redacting, logsHeaders: logsHeaders, isEnabled: { true }, log: log)
  }

  init(
    redacting: Set<String>, logsHeaders: Bool, isEnabled: @escaping @Sendable () -> Bool,
    log: @escaping @Sendable (String) -> Void
  ) {
    self.redactedHeaders = HeaderRedaction.names(adding: redacting)
    self.logsHeaders = logsHeaders
    self.isEnabled = isEnabled
    self.log = log
  }

  public func willSend(_ request: HTTPRequest, attempt: Int) {
    guard isEnabled() else { return }
    log(entry("→ \(request.method) \(request.url.absoluteString) (attempt \(attempt))", request.headers))
  }

  public func didReceive(_ result: Result<HTTPResponse, NetworkError>, for request: HTTPRequest, attempt: Int) {
    guard isEnabled() else { return }
    switch result {
    case .success(let response):
      log(
        entry(
          "← \(response.status) \(request.url.absoluteString) (attempt \(attempt), \(response.body.count) bytes)",
          response.headers
        )
      )
    case .failure(let error):
      log("✕ \(request.method) \(request.url.absoluteString) (attempt \(attempt)): \(error)")
    }
  }

  private func entry(_ line: String, _ headers: HTTPHeaders) -> String {
    guard logsHeaders, !headers.isEmpty else { return line }
    let redacted = HeaderRedaction.redact(headers, names: redactedHeaders)
    return ([line] + redacted.fields.map { "  \($0.name): \($0.value)" }).joined(separator: "\n")
  }
}
