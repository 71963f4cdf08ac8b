import _KilnSynchronization

/// Waits for something while letting the waiter leave as soon as its task is cancelled.
final class CancellableWait<Value: Sendable>: Sendable {
  private struct State {
    var continuation: CheckedContinuation<Value?, Never>?
    var isDone = false
  }

  private let state = KilnMutex(State())

  private init() {}

  /// Resumes the waiter with `value` (`nil`: cancelled); only the first call counts.
  private func finish(_ value: Value?) {
    let continuation = state.withLock { state -> CheckedContinuation<Value?, Never>? in
      defer {
        state.continuation = nil
        state.isDone = true
      }
      return state.continuation
    }
    continuation?.resume(returning: value)
  }

  /// Runs `start`, which must eventually call its argument with the value, and returns that
  /// value — or `nil` as soon as the calling task is cancelled.
  private func run(_ start: @escaping @Sendable (@escaping @Sendable (Value) -> Void) -> Void) async -> Value? {
    await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<Value?, Never>) in
        let isDone = state.withLock { state -> Bool in
          if state.isDone { return true }
          state.continuation = continuation
          return false
        }
        if isDone {
          continuation.resume(returning: nil)
        } else {
          start { [self] value in finish(value) }
        }
      }
    } onCancel: {
      finish(nil)
    }
  }

  /// The value of `task`, or `nil` when the calling task is cancelled first. The task itself
  /// is not cancelled: others may be waiting for it.
  static func value(of task: Task<Value, Never>) async -> Value? {
    await CancellableWait().run { deliver in
      Task { deliver(await task.value) }
    }
  }
}

extension CancellableWait where Value == Void {
  /// Suspends until the calling task is cancelled.
  static func untilCancelled() async {
    _ = await CancellableWait().run { _ in }
  }
}
