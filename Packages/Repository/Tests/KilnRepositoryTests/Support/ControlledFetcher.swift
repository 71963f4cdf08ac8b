import KilnRepository
import KilnTesting
import _KilnSynchronization

/// A fetcher whose calls wait until the test answers them, one by one and in any order.
/// A waiting call ends with `CancellationError` when its task is cancelled.
final class ControlledFetcher<Value: Sendable>: Sendable {
  private struct State {
    var waiting: [Int: CheckedContinuation<Result<Value, any Error>, Never>] = [:]
    var early: [Int: Result<Value, any Error>] = [:]
    var params: [String] = []
    var calls = 0
  }

  private let state = KilnMutex(State())
  /// The number of calls so far.
  let calls = AsyncCounter()
  /// The number of calls that ended (answered or cancelled).
  let ended = AsyncCounter()

  /// The params of the calls so far, in order.
  var params: [String] { state.withLock { $0.params } }

  /// Waits for call number `index` (0-based) and returns its answer.
  func call(_ param: String) async throws -> Value {
    let index = state.withLock { state in
      state.params.append(param)
      state.calls += 1
      return state.calls - 1
    }
    calls.increment()
    defer { ended.increment() }
    let result: Result<Value, any Error> = await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        let early: Result<Value, any Error>? = state.withLock { state in
          if let early = state.early.removeValue(forKey: index) { return early }
          state.waiting[index] = continuation
          return nil
        }
        if let early { continuation.resume(returning: early) }
      }
    } onCancel: {
      self.answer(index, .failure(CancellationError()))
    }
    return try result.get()
  }

  /// Answers call `index` (now, or when it arrives).
  func answer(_ index: Int, _ result: Result<Value, any Error>) {
    let continuation: CheckedContinuation<Result<Value, any Error>, Never>? = state.withLock { state in
      if let continuation = state.waiting.removeValue(forKey: index) { return continuation }
      if state.early[index] == nil { state.early[index] = result }
      return nil
    }
    continuation?.resume(returning: result)
  }

  /// Answers call `index` with `value`.
  func succeed(_ index: Int, _ value: Value) {
    answer(index, .success(value))
  }

  /// Fails call `index` with `error`.
  func fail(_ index: Int, _ error: TestError) {
    answer(index, .failure(error))
  }
}

extension ControlledFetcher: Fetcher {
  func fetch(param: String) async throws -> Value {
    try await call(param)
  }
}

/// A fetcher answering from a closure, counting its calls.
struct CountingFetcher<Value: Sendable>: Fetcher {
  let calls = AsyncCounter()
  let body: @Sendable (String) async throws -> Value

  init(_ body: @escaping @Sendable (String) async throws -> Value) {
    self.body = body
  }

  func fetch(param: String) async throws -> Value {
    calls.increment()
    return try await body(param)
  }
}

/// Completed with no more pages either way.
func completed<Content: Sendable>(_ content: Content) -> LoadingState<Content> {
  .completed(
    content: content, next: .fixed(canRequestAdditionalData: false), prev: .fixed(canRequestAdditionalData: false))
}

/// Collects the states a subscriber sees, in a task the test cancels.
final class Subscriber<Content: Sendable>: Sendable {
  let states = Recorder<LoadingState<Content>>()
  let snapshots = Recorder<LoadingSnapshot<Content>>()
  private let task: KilnMutex<Task<Void, Never>?> = KilnMutex(nil)
  let finished = AsyncCounter()

  init(_ sequence: LoadingStateSequence<Content>) {
    let states = self.states
    let snapshots = self.snapshots
    let finished = self.finished
    let task = Task {
      for await snapshot in sequence.withOrigin() {
        snapshots.append(snapshot)
        states.append(snapshot.state)
      }
      finished.increment()
    }
    self.task.withLock { $0 = task }
  }

  /// Waits until `count` states arrived and returns them.
  func wait(for count: Int) async -> [LoadingState<Content>] {
    await states.waitForCount(count)
    return states.values
  }

  /// Cancels the subscription and waits for its sequence to end.
  func cancel() async {
    task.withLock { $0 }?.cancel()
    await finished.wait(untilAtLeast: 1)
  }
}
