import Dispatch

/// A main-actor function bound to the main queue: what postfix `+>>` makes from a
/// `@MainActor` function.
///
/// ```swift
/// @MainActor func show(_ message: String) { … }
///
/// show+>>.async("Saved")                 // from any thread
/// let shown = show+>>.sync("Saved")      // waits; runs inline on the main queue
/// ```
public struct MainDispatchRoute<each Argument: Sendable, Output: Sendable>: Sendable {
  let function: @MainActor (repeat each Argument) -> Output

  /// Binds `function` to the main queue.
  ///
  /// - Parameter function: The main-actor function to call.
  public init(_ function: @escaping @MainActor (repeat each Argument) -> Output) {
    self.function = function
  }

  /// Calls the function with `arguments` asynchronously on the main queue.
  ///
  /// - Parameter arguments: The function's arguments.
  /// - Returns: The pending call; route its value to a handler with `+>>` or `~>>`, or
  ///   discard it.
  @discardableResult
  public func async(_ arguments: repeat each Argument) -> DispatchedCall<Output> {
    let pending = PendingResult<Output>()
    let function = function
    let arguments = (repeat each arguments)
    DispatchQueue.main.async {
      let output = MainActor.assumeIsolated { function(repeat each arguments) }
      pending.fulfill(output)
    }
    return DispatchedCall(pending: pending)
  }

  /// Calls the function with `arguments` on the main queue and waits for its value.
  ///
  /// Runs inline when the caller already runs on the main queue, instead of deadlocking.
  ///
  /// - Parameter arguments: The function's arguments.
  /// - Returns: The function's return value.
  /// - Important: Blocks the calling thread until the function has run; the main thread
  ///   must not be blocked waiting for the caller.
  public func sync(_ arguments: repeat each Argument) -> Output {
    if QueueIdentity.isOnMainQueue {
      return MainActor.assumeIsolated { function(repeat each arguments) }
    }
    return DispatchQueue.main.sync {
      MainActor.assumeIsolated { function(repeat each arguments) }
    }
  }
}
