import KilnQuery
import KilnTesting
import Testing

/// A typed failure for the tests that check error types survive a pipeline.
enum APIError: Error, Hashable {
  case offline
  case status(Int)
  case decoding
}

/// A named query with a typed failure: functions, unlike closure literals, can throw a
/// concrete type without annotations.
struct TypedQuery: Query {
  let outcome: Result<Int, APIError>

  func load() async throws(APIError) -> Int {
    try outcome.get()
  }
}

/// The outcome of `body` as a `Result` keeping its typed failure. Annotate the closure:
/// `outcome { () async throws(APIError) in try await ... }`.
func outcome<Value, Failure: Error>(
  _ body: () async throws(Failure) -> Value
) async -> Result<Value, Failure> {
  do throws(Failure) {
    return .success(try await body())
  } catch {
    return .failure(error)
  }
}

/// A query that ignores cancellation: its loads return only once the test calls `finish()`.
final class StubbornQuery: Query, Sendable {
  private let started = AsyncCounter()
  private let released = AsyncCounter()
  private let value: Int

  init(value: Int) {
    self.value = value
  }

  var loadCount: Int { started.value }

  /// "start" and "end" of every load, in order: loads that overlap interleave.
  let events = Recorder<String>()

  func waitForLoads(_ count: Int) async {
    await started.wait(untilAtLeast: count)
  }

  /// Lets every load, current and future, return.
  func finish() {
    released.increment()
  }

  func load() async -> Int {
    events.append("start")
    started.increment()
    // An unstructured task is not cancelled with its awaiting caller: the wait outlives it.
    await Task { [released] in await released.wait(untilAtLeast: 1) }.value
    events.append("end")
    return value
  }
}

extension StubbornQuery {
  /// Starts `load` in a task, waits until its load has reached this query, and cancels the
  /// task: its only caller has given up on the load, which runs on (it ignores cancellation).
  func abandonLoad<Value: Sendable>(
    _ load: @escaping @Sendable () async throws -> Value,
    sourceLocation: SourceLocation = #_sourceLocation
  ) async {
    let loads = loadCount
    let abandoned = Task { try await load() }
    await waitForLoads(loads + 1)
    abandoned.cancel()
    await #expect(throws: CancellationError.self, sourceLocation: sourceLocation) { try await abandoned.value }
  }
}

extension Result {
  /// The failure, or `nil` for a success.
  var failure: Failure? {
    if case .failure(let failure) = self { return failure }
    return nil
  }
}
