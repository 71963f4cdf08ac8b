import _KilnSynchronization

/// The value of a function dispatched to a queue, as it becomes available: a tiny future
/// that any number of observers can wait on, before or after it is fulfilled.
final class PendingResult<Output: Sendable>: Sendable {
  private enum State {
    case pending([@Sendable (Output) -> Void])
    case fulfilled(Output)
  }

  private let state = KilnMutex(State.pending([]))

  init() {}

  /// The value, once the function returned.
  var value: Output? {
    state.withLock { state in
      if case .fulfilled(let output) = state { return output }
      return nil
    }
  }

  /// Stores the function's value and runs the observers registered so far. Called once.
  func fulfill(_ output: Output) {
    let observers: [@Sendable (Output) -> Void] = state.withLock { state in
      guard case .pending(let observers) = state else {
        assertionFailure("A dispatched call was fulfilled twice")
        return []
      }
      state = .fulfilled(output)
      return observers
    }
    for observer in observers { observer(output) }
  }

  /// Runs `observer` with the value: at once (on the caller's thread) when it is already
  /// there, otherwise on the thread that fulfils it.
  func observe(_ observer: @escaping @Sendable (Output) -> Void) {
    let output: Output? = state.withLock { state in
      switch state {
      case .pending(var observers):
        observers.append(observer)
        state = .pending(observers)
        return nil
      case .fulfilled(let output):
        return output
      }
    }
    if let output { observer(output) }
  }
}
