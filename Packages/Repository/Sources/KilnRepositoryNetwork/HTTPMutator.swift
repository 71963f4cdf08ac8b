import Foundation
public import KilnNetwork
public import KilnRepository

/// A `Mutator` that sends each change as an HTTP request through a `NetworkHandler`, with
/// the change's `Idempotency-Key` header on every attempt, and reads the origin's answer.
///
/// ```swift
/// let titles = HTTPMutator<Note.ID, Note, String, NotesAPI>(
///   handler: NetworkHandler(transport: URLSessionTransport(), retryPolicy: .never),
///   apply: { title, note in note.map { var note = $0; note.title = title; return note } },
///   target: { title, id in NotesAPI.rename(id: id, title: title) },
///   content: { response in try JSONDecoder().decode(Note.self, from: response.body) })
/// let writes = try await notes.writes(
///   through: titles, outbox: outbox, channel: "note-title", paramCodec: .automatic, changeCodec: .automatic)
/// ```
///
/// Give it a handler whose retry policy is `.never`: the outbox retries each change itself
/// (with its own policy, across launches, pausing while the origin is unreachable), and a
/// handler that retried too would multiply the attempts and hide them from `Outbox.entries`.
///
/// How an answer is classified (``classify(_:)``, replaceable):
/// - 2xx: confirmed; `content` reads the origin's content from it (nil: the param is refetched);
/// - 408, 425, 429 and 5xx: `MutationSendError.transient`, with `Retry-After`;
/// - 409 whose body is an RFC 9457 problem about the idempotency key (the IETF idempotency
///   draft's "request still in progress"): `MutationSendError.outstanding`;
/// - any other 4xx: `MutationSendError.rejected`;
/// - a refused connection or an unknown host: `MutationSendError.unreachable`; a lost
///   connection or a timeout: transient.
public struct HTTPMutator<Param: Hashable & Sendable, Data: Sendable, Change: Sendable, Target: TargetGroup>: Mutator {
  /// Sends the requests.
  public let handler: NetworkHandler
  private let applying: @Sendable (Change, Data?) -> Data?
  private let target: @Sendable (Change, Param) -> Target
  private let content: @Sendable (HTTPResponse) throws -> Data?
  private let resolving: @Sendable (MutationRejection<Param, Change>) async -> Change?
  private let classifying: @Sendable (NetworkError) -> MutationSendError

  /// Creates a mutator.
  ///
  /// - Parameters:
  ///   - handler: Sends the requests; its retry policy should be `.never`.
  ///   - apply: How a change applies to the content locally.
  ///   - target: The request of a change to a param. Its headers get `Idempotency-Key`.
  ///   - content: The origin's content after the change, read from a successful response, or
  ///     `nil` (the default) to refetch the param instead. When it throws, the change still
  ///     counts as confirmed (the origin applied it) and the param is refetched.
  ///   - resolve: A change to send instead of a rejected one, or `nil` (the default) to drop it.
  ///   - classify: How a failed request is classified; ``classify(_:)`` by default.
  public init(
    handler: NetworkHandler,
    apply: @escaping @Sendable (Change, Data?) -> Data?,
    target: @escaping @Sendable (Change, Param) -> Target,
    content: @escaping @Sendable (HTTPResponse) throws -> Data? = { _ in nil },
    resolve: @escaping @Sendable (MutationRejection<Param, Change>) async -> Change? = { _ in nil },
    classify: @escaping @Sendable (NetworkError) -> MutationSendError = HTTPMutator.classify
  ) {
    self.handler = handler
    applying = apply
    self.target = target
    self.content = content
    resolving = resolve
    classifying = classify
  }

  public func apply(_ change: Change, to content: Data?) -> Data? {
    applying(change, content)
  }

  /// Sends `target(change, param)` with `Idempotency-Key: key`.
  public func send(_ change: Change, param: Param, key: IdempotencyKey) async throws(MutationSendError) -> Data? {
    let response: HTTPResponse
    do {
      response = try await handler.request(IdempotentTarget(base: target(change, param), key: key))
    } catch {
      throw classifying(error)
    }
    return try? content(response)
  }

  public func resolve(_ rejection: MutationRejection<Param, Change>) async -> Change? {
    await resolving(rejection)
  }

  /// The default classification of a failed request (see ``HTTPMutator``).
  public static func classify(_ error: NetworkError) -> MutationSendError {
    switch error {
    case .status(let response):
      let retryAfter = NetworkHandler.RetryPolicy.retryAfter(in: response, now: Date())
      switch response.status {
      case 408, 425, 429, 500...599:
        return .transient(error, retryAfter: retryAfter)
      case 409 where isIdempotencyProblem(response):
        return .outstanding
      default:
        return .rejected(status: response.status, body: response.body.isEmpty ? nil : response.body)
      }
    case .transport(let transport):
      switch transport {
      case .connectionRefused, .cannotFindHost, .secureConnectionFailed: return .unreachable(error)
      default: return .transient(error, retryAfter: nil)
      }
    case .cancelled:
      // The outbox closed: not the change's failure.
      return .unreachable(error)
    case .invalidURL, .invalidArgument, .encodingFailed:
      // The request cannot be made: sending it again would fail the same way.
      return .rejected(status: 0, body: Foundation.Data("\(error)".utf8))
    case .timedOut, .decoding, .authentication, .simulatedFailure, .noSampleData:
      return .transient(error, retryAfter: nil)
    }
  }

  /// Whether a 409 is the idempotency draft's "a request with this key is still being
  /// processed": a problem document (`application/problem+json`) that names the key.
  static func isIdempotencyProblem(_ response: HTTPResponse) -> Bool {
    guard let type = response.headers.first("Content-Type")?.lowercased(), type.contains("problem+json") else {
      return false
    }
    return String(decoding: response.body, as: UTF8.self).lowercased().contains("idempotency")
  }
}

/// A target with an `Idempotency-Key` header added to its own.
struct IdempotentTarget<Base: TargetGroup>: TargetGroup {
  let base: Base
  let key: IdempotencyKey

  var baseURL: URL { base.baseURL }
  var path: String { base.path }
  var pathSegments: [String] { base.pathSegments }
  var method: HTTPMethod { base.method }
  var task: NetworkTask { base.task }
  var headers: [String: String]? {
    var headers = base.headers ?? [:]
    headers["Idempotency-Key"] = key.headerValue
    return headers
  }
  var storageKey: String { base.storageKey }
  var sampleData: Foundation.Data? { base.sampleData }
  var redirects: TransportOptions.Redirects? { base.redirects }
}
