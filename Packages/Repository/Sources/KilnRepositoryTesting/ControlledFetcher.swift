public import KilnRepository
import KilnTesting

/// A `Fetcher` whose calls wait until the test answers them: one by one, in
/// any order, before or after they arrive.
///
/// Calls are numbered from 0 in the order they arrive. The test answers call `n` with
/// ``succeed(_:with:)``, ``fail(_:with:)`` or ``answer(_:with:)``, and waits for it to start
/// with ``waitForCall(_:timeout:fileID:filePath:line:column:)``: no sleeping, no polling.
///
/// ```swift
/// let fetcher = ControlledFetcher<String, Int>()
/// let user = AnyStoreFlowable.from(cacher: Repository<String, Int>(), fetcher: fetcher, param: "a")
/// let states = LoadingStateRecorder(user.publish())
/// await fetcher.waitForCall(0)            // the repository asked for "a"
/// fetcher.succeed(0, with: 7)
/// #expect(await states.waitForCount(2).map(\.content) == [nil, 7])   // loading, then completed
/// #expect(fetcher.params == ["a"])
/// ```
///
/// A call still waiting when its task is cancelled (the repository cancels a fetch nobody
/// waits for any more) ends at once with `CancellationError`, and counts in
/// ``cancelledCount`` as well as ``endedCount``.
///
/// Where a fetcher is a closure (`AnyFetcher`, a `Loader`), pass ``closure``.
public final class ControlledFetcher<Param: Hashable & Sendable, Data: Sendable>: Fetcher, Sendable {
  private let calls: ControlledCalls<Param, Data>

  /// Creates a fetcher with no calls yet.
  ///
  /// - Parameter timeout: How long its waits wait by default before they record an issue; on
  ///   the continuous clock, whatever clock the code under test uses. 30 seconds by default.
  public init(timeout: Duration = .seconds(30)) {
    calls = ControlledCalls(timeout: timeout)
  }

  /// Makes the next call, with `param`, and waits until the test answers it.
  ///
  /// - Throws: The error the test answered with, or `CancellationError` when the calling task
  ///   is cancelled before the answer.
  public func fetch(param: Param) async throws -> Data {
    try await calls.call(param)
  }

  /// ``fetch(param:)`` as a closure, for `AnyFetcher` or a `Loader`.
  ///
  /// ```swift
  /// let flowable = AnyStoreFlowable.from(cacher: users, fetcher: AnyFetcher(fetcher.closure), param: "a")
  /// ```
  public var closure: @Sendable (Param) async throws -> Data {
    { [self] param in try await fetch(param: param) }
  }

  // MARK: Answering

  /// Answers call `call` (0-based): now if it waits, when it arrives otherwise.
  ///
  /// A call keeps the first answer it gets; answering it again does nothing.
  ///
  /// - Parameters:
  ///   - call: The number of the call, from 0 in the order calls arrive.
  ///   - result: What the call returns or throws.
  public func answer(_ call: Int, with result: Result<Data, any Error>) {
    calls.answer(call, with: result)
  }

  /// Makes call `call` (0-based) return `data`, now or when it arrives.
  public func succeed(_ call: Int, with data: Data) {
    answer(call, with: .success(data))
  }

  /// Makes call `call` (0-based) throw `error`, now or when it arrives.
  public func fail(_ call: Int, with error: any Error) {
    answer(call, with: .failure(error))
  }

  // MARK: Observing

  /// The params of the calls so far, in the order the calls arrived.
  public var params: [Param] { calls.requests }

  /// The number of calls so far.
  public var callCount: Int { calls.calls.value }

  /// The number of calls that ended: returned, threw the test's error, or were cancelled.
  public var endedCount: Int { calls.ended.value }

  /// The number of calls that ended with `CancellationError` because their task was cancelled
  /// while they waited.
  public var cancelledCount: Int { calls.cancelled.value }

  /// Suspends until call `call` (0-based) has started, that is until `call + 1` calls arrived.
  ///
  /// Returns as soon as the call arrives. When it has not arrived within `timeout` (or the
  /// waiting task is cancelled), records an issue at the caller and returns `false`.
  ///
  /// - Parameters:
  ///   - call: The number of the call to wait for.
  ///   - timeout: How long to wait; the fetcher's timeout when `nil`.
  ///   - fileID: The file ID of the caller, where a wait that runs out records its issue.
  ///   - filePath: The file path of the caller.
  ///   - line: The line of the caller.
  ///   - column: The column of the caller.
  /// - Returns: Whether the call started.
  @discardableResult
  public func waitForCall(
    _ call: Int, timeout: Duration? = nil,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async -> Bool {
    await expectWait(
      for: calls.calls, toReach: call + 1, timeout: timeout ?? calls.timeout,
      "Call \(call) of the ControlledFetcher did not start (\(callCount) calls so far)",
      at: CallerLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  /// Suspends until at least `count` calls have ended (returned, thrown or been cancelled).
  ///
  /// When they have not within `timeout` (or the waiting task is cancelled), records an issue
  /// at the caller and returns `false`.
  ///
  /// - Parameters:
  ///   - count: The number of ended calls to wait for.
  ///   - timeout: How long to wait; the fetcher's timeout when `nil`.
  ///   - fileID: The file ID of the caller, where a wait that runs out records its issue.
  ///   - filePath: The file path of the caller.
  ///   - line: The line of the caller.
  ///   - column: The column of the caller.
  /// - Returns: Whether that many calls ended.
  @discardableResult
  public func waitForEndedCalls(
    _ count: Int, timeout: Duration? = nil,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async -> Bool {
    await expectWait(
      for: calls.ended, toReach: count, timeout: timeout ?? calls.timeout,
      "\(count) calls of the ControlledFetcher did not end (\(endedCount) ended so far)",
      at: CallerLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  /// Suspends until at least `count` calls have been cancelled while they waited.
  ///
  /// When they have not within `timeout` (or the waiting task is cancelled), records an issue
  /// at the caller and returns `false`.
  ///
  /// - Parameters:
  ///   - count: The number of cancelled calls to wait for.
  ///   - timeout: How long to wait; the fetcher's timeout when `nil`.
  ///   - fileID: The file ID of the caller, where a wait that runs out records its issue.
  ///   - filePath: The file path of the caller.
  ///   - line: The line of the caller.
  ///   - column: The column of the caller.
  /// - Returns: Whether that many calls were cancelled.
  @discardableResult
  public func waitForCancelledCalls(
    _ count: Int, timeout: Duration? = nil,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async -> Bool {
    await expectWait(
      for: calls.cancelled, toReach: count, timeout: timeout ?? calls.timeout,
      "\(count) calls of the ControlledFetcher were not cancelled (\(cancelledCount) so far)",
      at: CallerLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }
}
