public import Foundation

/// How a repository's content is changed locally, and how the change is sent to the origin.
///
/// A mutator is the write side of a ``Repository``: ``apply(_:to:)`` shows a change at once,
/// ``send(_:param:key:)`` makes one attempt at the origin, and ``resolve(_:)`` may answer a
/// rejection with another change. Attach one with ``Repository/writes(through:outbox:channel:paramCodec:changeCodec:scope:)``.
///
/// ```swift
/// struct NoteTitle: Mutator {
///   let handler: NetworkHandler
///   func apply(_ title: String, to note: Note?) -> Note? {
///     note.map { var note = $0; note.title = title; return note }
///   }
///   func send(_ title: String, param id: Note.ID, key: IdempotencyKey) async throws(MutationSendError) -> Note? {
///     // PATCH /notes/<id> with the `Idempotency-Key` header; classify the answer.
///   }
/// }
/// ```
///
/// Prefer **absolute** changes ("the title is X") to relative ones ("add 1"): ``apply(_:to:)``
/// runs again each time the base content changes under a change that is still pending (a
/// refresh, an earlier change confirmed), and an absolute change gives the same result
/// whatever the origin already applied.
public protocol Mutator<Param, Data, Change>: Sendable {
  /// What identifies the content, as in the repository.
  associatedtype Param: Hashable & Sendable
  /// The repository's content.
  associatedtype Data: Sendable
  /// One change, as stored in the outbox until the origin confirms it.
  associatedtype Change: Sendable

  /// The content with `change` applied; `content` is `nil` when nothing is known yet. Pure
  /// and fast: it runs again whenever the content under the change moves.
  func apply(_ change: Change, to content: Data?) -> Data?

  /// One attempt at sending `change` to the origin, with `key` as its `Idempotency-Key`
  /// (the same on every attempt, after a restart too).
  ///
  /// - Returns: The origin's content of `param` after the change, when it sent one (then no
  ///   refetch follows), or `nil`.
  /// - Throws: How the attempt failed, which decides what happens to the change: see
  ///   ``MutationSendError``.
  func send(_ change: Change, param: Param, key: IdempotencyKey) async throws(MutationSendError) -> Data?

  /// A change to send *instead* of one the origin rejected (it takes the rejected change's
  /// place and gets a new idempotency key), or `nil` to drop it. The default drops it.
  func resolve(_ rejection: MutationRejection<Param, Change>) async -> Change?
}

extension Mutator {
  /// Drops every rejected change.
  public func resolve(_ rejection: MutationRejection<Param, Change>) async -> Change? { nil }
}

/// How one attempt at sending a change failed, as a ``Mutator`` classifies it. The outbox
/// decides from it what happens to the change.
public enum MutationSendError: Error, Sendable, CustomStringConvertible {
  /// The origin refused the change for good (a 4xx such as 409 or 422): the mutator's
  /// ``Mutator/resolve(_:)`` may replace it; otherwise it leaves the outbox, the content goes
  /// back to the origin's (refetched), and ``MutationRejection`` reports it.
  case rejected(status: Int, body: Foundation.Data?)
  /// A failure that may pass (a 5xx, 408, 429, a reset connection): the change stays and is
  /// sent again as the outbox's retry policy says, after `retryAfter` when the origin gave one.
  case transient(any Error, retryAfter: Duration?)
  /// The origin cannot be reached (no network, connection refused): every change waits, and
  /// the outbox probes until the origin answers or ``Outbox/resume()`` is called. Does not
  /// count against the retry policy.
  case unreachable(any Error)
  /// The origin still works on an earlier attempt with the same key (the idempotency draft's
  /// 409): retried like ``transient(_:retryAfter:)``.
  case outstanding

  public var description: String {
    switch self {
    case .rejected(let status, _): "rejected by the origin (\(status))"
    case .transient(let error, _): "failed: \(error)"
    case .unreachable(let error): "origin unreachable: \(error)"
    case .outstanding: "an earlier attempt is still in progress at the origin"
    }
  }
}

/// A change the origin refused for good: what it was, for what, and the origin's answer.
public struct MutationRejection<Param: Sendable, Change: Sendable>: Error, Sendable {
  /// The param the change was for.
  public let param: Param
  /// The change refused.
  public let change: Change
  /// The HTTP status (or the mutator's code) of the refusal.
  public let status: Int
  /// The body of the refusal, if any.
  public let body: Foundation.Data?

  /// Creates a rejection.
  public init(param: Param, change: Change, status: Int, body: Foundation.Data?) {
    self.param = param
    self.change = change
    self.status = status
    self.body = body
  }
}
