import Foundation
import KilnNetwork

/// The targets the unit tests send.
enum TestAPI: TargetGroup {
  case item(id: Int)
  case search(QueryParameters)
  case create(body: HTTPBody)
  case custom(method: HTTPMethod, headers: [String: String]? = nil)
  case sampled(Data?)
  case segments([String])

  var baseURL: URL { URL(string: "https://api.example.com/v1")! }

  var path: String {
    switch self {
    case .item(let id): "items/\(id)"
    case .search: "search"
    case .create: "items"
    case .custom: "custom"
    case .sampled: "sampled"
    case .segments(let segments): segments.joined(separator: "/")
    }
  }

  var pathSegments: [String] {
    if case .segments(let segments) = self { return segments }
    return path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
  }

  var method: HTTPMethod {
    switch self {
    case .create: .post
    case .custom(let method, _): method
    default: .get
    }
  }

  var task: NetworkTask {
    switch self {
    case .search(let parameters): .parameters(parameters)
    case .create(let body): .body(body)
    default: .plain
    }
  }

  var headers: [String: String]? {
    if case .custom(_, let headers) = self { return headers }
    return nil
  }

  var sampleData: Data? {
    if case .sampled(let data) = self { return data }
    return nil
  }
}

/// A target whose base URL is whatever the test says.
struct BaseURLTarget: TargetGroup {
  var baseURL: URL
  var path: String = "items"
}

struct Item: Codable, Equatable, Sendable {
  var id: Int
  var name: String
}

extension StubTransport.Reply {
  static func item(_ id: Int, name: String = "milk", delay: StubTransport.Delay = .immediate) -> Self {
    .json(#"{"id": \#(id), "name": "\#(name)"}"#, delay: delay)
  }
}

/// A handler with exact retry delays (no jitter) on `clock`.
func makeHandler(
  _ transport: StubTransport,
  clock: any Clock<Duration> = ContinuousClock(),
  retryPolicy: NetworkHandler.RetryPolicy = NetworkHandler.RetryPolicy(jitter: .none),
  storage: (any ResponseStore)? = nil,
  responseMode: ResponseMode = .normal,
  watches: [any NetworkWatch] = [],
  authentication: (any RequestAuthenticating)? = nil,
  validation: StatusValidation = .successful,
  timeout: Duration? = nil,
  deduplicatesRequests: Bool = false,
  now: @escaping @Sendable () -> Date = Date.init
) -> NetworkHandler {
  NetworkHandler(
    transport: transport,
    storage: storage,
    retryPolicy: retryPolicy,
    responseMode: responseMode,
    watches: watches,
    authentication: authentication,
    validation: validation,
    timeout: timeout,
    deduplicatesRequests: deduplicatesRequests,
    clock: clock,
    now: now
  )
}

/// Sends `target` through `handler` in a new task, the typed failure kept in the result.
func send(_ handler: NetworkHandler, _ target: some TargetGroup) -> Task<Result<HTTPResponse, NetworkError>, Never> {
  Task {
    do throws(NetworkError) {
      return .success(try await handler.request(target))
    } catch {
      return .failure(error)
    }
  }
}

extension Result where Failure == NetworkError {
  /// The response's status, whether it succeeded or failed with a response.
  var statusCode: Int? {
    switch self {
    case .success(let value as HTTPResponse): value.status
    case .success: nil
    case .failure(let error): error.statusCode
    }
  }
}
