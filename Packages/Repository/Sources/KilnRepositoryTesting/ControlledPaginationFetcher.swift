public import KilnRepository
import KilnTesting

/// A `TwoWayPaginationFetcher` (so also a `PaginationFetcher`) whose page requests wait until
/// the test answers them.
///
/// It works as ``ControlledFetcher`` does: first, next and previous pages are calls numbered
/// from 0 in one sequence, in the order they arrive, and ``requests`` says which page each
/// asked for.
///
/// ```swift
/// let pages = ControlledPaginationFetcher<String, Int>()
/// let list = PaginationStoreFlowable.from(cacher: PaginationRepository<String, Int>(), fetcher: pages, param: "l")
/// let next = Task { await list.validate(); return await list.requestNextData() }
/// await pages.waitForCall(0)
/// pages.succeed(0, with: PaginationResult(data: [1, 2], nextKey: "2"))
/// await pages.waitForCall(1)
/// #expect(pages.requests == [.first(param: "l"), .next(key: "2", param: "l")])
/// pages.succeed(1, with: PaginationResult(data: [3], nextKey: nil))
/// #expect(await next.value == .loaded)
/// ```
public final class ControlledPaginationFetcher<Param: Hashable & Sendable, Element: Sendable>:
  TwoWayPaginationFetcher, Sendable
{
  /// The page a call asked for.
  public enum Request: Hashable, Sendable {
    /// The first page (`fetch(param:)`).
    case first(param: Param)
    /// The page after the held ones (`fetchNext(nextKey:param:)`).
    case next(key: String, param: Param)
    /// The page before the held ones
    /// (`fetchPrev(prevKey:param:)`).
    case prev(key: String, param: Param)
  }

  private let calls: ControlledCalls<Request, PaginationResult<Element>>

  /// Creates a fetcher with no calls yet.
  ///
  /// - Parameter timeout: How long its waits wait by default before they record an issue; on
  ///   the continuous clock. 30 seconds by default.
  public init(timeout: Duration = .seconds(30)) {
    calls = ControlledCalls(timeout: timeout)
  }

  /// Asks for the first page and waits until the test answers.
  public func fetch(param: Param) async throws -> PaginationResult<Element> {
    try await calls.call(.first(param: param))
  }

  /// Asks for the page of `nextKey` and waits until the test answers.
  public func fetchNext(nextKey: String, param: Param) async throws -> PaginationResult<Element> {
    try await calls.call(.next(key: nextKey, param: param))
  }

  /// Asks for the page of `prevKey` and waits until the test answers.
  public func fetchPrev(prevKey: String, param: Param) async throws -> PaginationResult<Element> {
    try await calls.call(.prev(key: prevKey, param: param))
  }

  // MARK: Answering

  /// Answers call `call` (0-based): now if it waits, when it arrives otherwise.
  ///
  /// A call keeps the first answer it gets; answering it again does nothing.
  public func answer(_ call: Int, with result: Result<PaginationResult<Element>, any Error>) {
    calls.answer(call, with: result)
  }

  /// Makes call `call` (0-based) return `page`, now or when it arrives.
  public func succeed(_ call: Int, with page: PaginationResult<Element>) {
    answer(call, with: .success(page))
  }

  /// Makes call `call` (0-based) throw `error`, now or when it arrives.
  public func fail(_ call: Int, with error: any Error) {
    answer(call, with: .failure(error))
  }

  // MARK: Observing

  /// The pages the calls so far asked for, in the order the calls arrived.
  public var requests: [Request] { calls.requests }

  /// The number of calls so far.
  public var callCount: Int { calls.calls.value }

  /// The number of calls that ended: returned, threw the test's error, or were cancelled.
  public var endedCount: Int { calls.ended.value }

  /// The number of calls that ended with `CancellationError` because their task was cancelled
  /// while they waited.
  public var cancelledCount: Int { calls.cancelled.value }

  /// Suspends until call `call` (0-based) has started; records an issue at the caller and
  /// returns `false` when it has not within `timeout`.
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
      "Call \(call) of the ControlledPaginationFetcher did not start (\(callCount) calls so far)",
      at: CallerLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  /// Suspends until at least `count` calls have ended; records an issue at the caller and
  /// returns `false` when they have not within `timeout`.
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
      "\(count) calls of the ControlledPaginationFetcher did not end (\(endedCount) ended so far)",
      at: CallerLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  /// Suspends until at least `count` calls have been cancelled while they waited; records an
  /// issue at the caller and returns `false` when they have not within `timeout`.
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
      "\(count) calls of the ControlledPaginationFetcher were not cancelled (\(cancelledCount) so far)",
      at: CallerLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }
}
