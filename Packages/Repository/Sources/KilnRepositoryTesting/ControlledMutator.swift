public import KilnRepository
import KilnTesting

/// A `Mutator` whose sends wait until the test answers them, one by one, in any order: how a
/// test plays the origin of an outbox's writes.
///
/// Sends are numbered from 0 in the order they arrive; ``sends`` lists what each carried
/// (param, change and idempotency key). The test answers send `n` with ``confirm(_:with:)``
/// or ``fail(_:with:)`` and waits for it with ``waitForSend(_:timeout:fileID:filePath:line:column:)``.
///
/// ```swift
/// let mutator = ControlledMutator<String, Int, Int> { change, _ in change }
/// let writes = try await repository.writes(
///   through: mutator, outbox: outbox, channel: "counts", paramCodec: .automatic, changeCodec: .automatic)
/// try await writes.mutate("a", 7)
/// await mutator.waitForSend(0)
/// mutator.fail(0, with: .rejected(status: 409, body: nil))
/// ```
///
/// A send still waiting when its task is cancelled (the outbox closed) ends with
/// `MutationSendError.unreachable` carrying `CancellationError`.
public final class ControlledMutator<Param: Hashable & Sendable, Data: Sendable, Change: Sendable>: Mutator, Sendable {
  /// What one send carried.
  public struct Send: Sendable {
    /// The param.
    public let param: Param
    /// The change.
    public let change: Change
    /// The idempotency key.
    public let key: IdempotencyKey
  }

  private let calls: ControlledCalls<Send, Data?>
  private let applying: @Sendable (Change, Data?) -> Data?
  private let resolving: @Sendable (MutationRejection<Param, Change>) async -> Change?

  /// Creates a mutator.
  ///
  /// - Parameters:
  ///   - timeout: How long its waits wait by default before they record an issue; 30 seconds.
  ///   - resolve: The resolver of rejections; by default none (rejected changes are dropped).
  ///   - apply: How a change applies to the content.
  public init(
    timeout: Duration = .seconds(30),
    resolve: @escaping @Sendable (MutationRejection<Param, Change>) async -> Change? = { _ in nil },
    apply: @escaping @Sendable (Change, Data?) -> Data?
  ) {
    calls = ControlledCalls(timeout: timeout)
    applying = apply
    resolving = resolve
  }

  public func apply(_ change: Change, to content: Data?) -> Data? {
    applying(change, content)
  }

  /// Makes the next send and waits until the test answers it.
  public func send(_ change: Change, param: Param, key: IdempotencyKey) async throws(MutationSendError) -> Data? {
    do {
      return try await calls.call(Send(param: param, change: change, key: key))
    } catch let error as MutationSendError {
      throw error
    } catch {
      throw .unreachable(error)
    }
  }

  public func resolve(_ rejection: MutationRejection<Param, Change>) async -> Change? {
    await resolving(rejection)
  }

  // MARK: Answering

  /// Confirms send `send` (0-based), with the origin's content after it or `nil`.
  public func confirm(_ send: Int, with content: Data? = nil) {
    calls.answer(send, with: .success(content))
  }

  /// Fails send `send` (0-based) with `error`.
  public func fail(_ send: Int, with error: MutationSendError) {
    calls.answer(send, with: .failure(error))
  }

  // MARK: Observing

  /// What the sends so far carried, in the order they arrived.
  public var sends: [Send] { calls.requests }

  /// The number of sends so far.
  public var sendCount: Int { calls.calls.value }

  /// Suspends until send `send` (0-based) has arrived.
  ///
  /// When it has not within `timeout`, records an issue at the caller and returns `false`.
  ///
  /// - Parameters:
  ///   - send: The send to wait for.
  ///   - timeout: How long to wait; the mutator's timeout when `nil`.
  ///   - fileID: The file ID of the caller, where a wait that runs out records its issue.
  ///   - filePath: The file path of the caller.
  ///   - line: The line of the caller.
  ///   - column: The column of the caller.
  /// - Returns: Whether the send arrived.
  @discardableResult
  public func waitForSend(
    _ send: Int, timeout: Duration? = nil,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async -> Bool {
    await expectWait(
      for: calls.calls, toReach: send + 1, timeout: timeout ?? calls.timeout,
      "Send \(send) of the ControlledMutator did not arrive (\(sendCount) sends so far)",
      at: CallerLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  /// Suspends until at least `count` sends have ended (answered or cancelled).
  ///
  /// When they have not within `timeout`, records an issue at the caller and returns `false`.
  ///
  /// - Parameters:
  ///   - count: The number of ended sends to wait for.
  ///   - timeout: How long to wait; the mutator's timeout when `nil`.
  ///   - fileID: The file ID of the caller, where a wait that runs out records its issue.
  ///   - filePath: The file path of the caller.
  ///   - line: The line of the caller.
  ///   - column: The column of the caller.
  /// - Returns: Whether that many sends ended.
  @discardableResult
  public func waitForEndedSends(
    _ count: Int, timeout: Duration? = nil,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async -> Bool {
    await expectWait(
      for: calls.ended, toReach: count, timeout: timeout ?? calls.timeout,
      "\(count) sends of the ControlledMutator did not end (\(calls.ended.value) ended so far)",
      at: CallerLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }
}
