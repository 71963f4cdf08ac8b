import KilnTesting
import _KilnSynchronization

/// Numbered calls that each wait until the test answers them, in any order, before or after
/// they arrive: the engine of ``ControlledFetcher`` and ``ControlledPaginationFetcher``.
///
/// A waiting call whose task is cancelled ends at once with `CancellationError` (unless its
/// answer was already given).
final class ControlledCalls<Request: Sendable, Answer: Sendable>: Sendable {
  /// How a call ends.
  private enum Outcome {
    case answered(Result<Answer, any Error>)
    case cancelled
  }

  private struct State {
    var requests: [Request] = []
    var waiting: [Int: CheckedContinuation<Outcome, Never>] = [:]
    /// Answers given before their call arrived (or while it was being parked).
    var early: [Int: Outcome] = [:]
  }

  private let state = KilnMutex(State())
  /// The number of calls so far.
  let calls = AsyncCounter()
  /// The number of calls that ended (answered or cancelled).
  let ended = AsyncCounter()
  /// The number of calls that ended with `CancellationError` because their task was cancelled.
  let cancelled = AsyncCounter()
  /// The default time limit of the waits.
  let timeout: Duration

  init(timeout: Duration) {
    self.timeout = timeout
  }

  /// The requests of the calls so far, in the order they arrived.
  var requests: [Request] { state.withLock { $0.requests } }

  /// Makes call number `requests.count` with `request` and waits for its answer.
  func call(_ request: Request) async throws -> Answer {
    let index = state.withLock { state in
      state.requests.append(request)
      return state.requests.count - 1
    }
    calls.increment()
    let outcome: Outcome = await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        let early: Outcome? = state.withLock { state in
          if let early = state.early.removeValue(forKey: index) { return early }
          state.waiting[index] = continuation
          return nil
        }
        if let early { continuation.resume(returning: early) }
      }
    } onCancel: {
      self.settle(index, .cancelled)
    }
    // `ended` first: a test that saw a call cancelled must also see it ended.
    ended.increment()
    switch outcome {
    case .answered(let result):
      return try result.get()
    case .cancelled:
      cancelled.increment()
      throw CancellationError()
    }
  }

  /// Answers call `index`: now if it waits, when it arrives otherwise. A call that already
  /// ended, or was already answered, keeps its first answer.
  func answer(_ index: Int, with result: Result<Answer, any Error>) {
    precondition(index >= 0, "calls are numbered from 0")
    settle(index, .answered(result))
  }

  private func settle(_ index: Int, _ outcome: Outcome) {
    let continuation: CheckedContinuation<Outcome, Never>? = state.withLock { state in
      if let continuation = state.waiting.removeValue(forKey: index) { return continuation }
      if state.early[index] == nil { state.early[index] = outcome }
      return nil
    }
    continuation?.resume(returning: outcome)
  }
}
