public import Foundation

/// A group of related API endpoints, described as values: one case of an enum per endpoint,
/// in the style of Moya and Lynn.
///
/// ```swift
/// enum GitHub: TargetGroup {
///   case user(name: String)
///   case search(query: String, page: Int)
///
///   var baseURL: URL { URL(string: "https://api.github.com")! }
///
///   var path: String {
///     switch self {
///     case .user(let name): "users/\(name)"
///     case .search: "search/repositories"
///     }
///   }
///
///   var task: NetworkTask {
///     switch self {
///     case .user: .plain
///     case .search(let query, let page): .parameters(["q": query, "page": page])
///     }
///   }
/// }
///
/// let user = try await handler.request(GitHub.user(name: "octocat"), as: User.self)
/// ```
///
/// Only ``baseURL`` and ``path`` are required. The handler builds the URL with
/// ``makeURL()``: every path segment and query value is percent-encoded exactly, so any
/// text — `&`, `=`, `+`, spaces, `/`, `?`, `#`, `%`, emoji — reaches the server as written.
public protocol TargetGroup: Sendable {
  /// The URL every path of the group is relative to, such as `https://api.example.com/v1`.
  var baseURL: URL { get }

  /// The endpoint's path below ``baseURL``, unencoded, with `/` between segments, such as
  /// `"users/42"`. Each segment is percent-encoded when the URL is built.
  var path: String { get }

  /// The endpoint's path as unencoded segments; by default ``path`` split at `/`.
  ///
  /// Implement it instead of ``path`` when a segment itself contains `/`: the segment
  /// `"a/b"` is sent as `a%2Fb`.
  var pathSegments: [String] { get }

  /// The request method; `GET` by default.
  var method: HTTPMethod { get }

  /// The query parameters and body; ``NetworkTask/plain`` by default.
  var task: NetworkTask { get }

  /// Header fields added to the request; none by default.
  var headers: [String: String]? { get }

  /// The key the response is cached under by a response store; by default the method and
  /// the URL.
  var storageKey: String { get }

  /// Data returned in the ``ResponseMode/sample`` mode when nothing valid is cached; none by
  /// default.
  var sampleData: Data? { get }

  /// The redirects the transport follows for this endpoint; `nil` (the default) for the
  /// handler's ``NetworkHandler/redirects``. `.none` returns a 3xx response as it is.
  var redirects: TransportOptions.Redirects? { get }
}

extension TargetGroup {
  public var pathSegments: [String] {
    path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
  }

  public var method: HTTPMethod { .get }

  public var task: NetworkTask { .plain }

  public var headers: [String: String]? { nil }

  public var storageKey: String {
    let url = (try? makeURL())?.absoluteString ?? "\(baseURL.absoluteString)/\(path)"
    return "\(method.rawValue) \(url)"
  }

  public var sampleData: Data? { nil }

  public var redirects: TransportOptions.Redirects? { nil }
}
