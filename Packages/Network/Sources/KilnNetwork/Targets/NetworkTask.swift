/// What a target sends besides its method, path and headers: query parameters, a body, both or
/// neither.
///
/// ```swift
/// var task: NetworkTask {
///   switch self {
///   case .list(let page): .parameters(["page": page, "per_page": 50])
///   case .create(let item): .body(.json(item))
///   case .upload(let id, let file): .parametersAndBody(["id": id], .file(file, contentType: "image/png"))
///   case .ping: .plain
///   }
/// }
/// ```
public enum NetworkTask: Sendable {
  /// No query parameters, no body.
  case plain
  /// Query parameters appended to the URL, no body.
  case parameters(QueryParameters)
  /// A body, no query parameters.
  case body(HTTPBody)
  /// Query parameters appended to the URL and a body.
  case parametersAndBody(QueryParameters, HTTPBody)

  /// The query parameters, or `nil` when the task has none.
  public var queryParameters: QueryParameters? {
    switch self {
    case .plain, .body: nil
    case .parameters(let parameters), .parametersAndBody(let parameters, _): parameters
    }
  }

  /// The body, or `nil` when the task has none.
  public var body: HTTPBody? {
    switch self {
    case .plain, .parameters: nil
    case .body(let body), .parametersAndBody(_, let body): body
    }
  }
}
