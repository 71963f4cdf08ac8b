import _KilnSynchronization

/// Calls a callback-based function and suspends until it calls back, then returns the
/// callback's arguments: the async counterpart of `<<-`.
///
/// ```swift
/// let (data, response, error) = try await withCallback {
///   URLSession.shared.dataTask(with: url, completionHandler: $0).resume()
/// }
/// let user = try await withCallback { api.loadUser(id: 42, completion: $0) }.get()  // a Result
/// ```
///
/// The arguments come back as a single value, a tuple, or `()` — whatever the callback
/// receives, for any number of arguments.
///
/// - Parameters:
///   - isolation: The actor `body` runs on; by default the caller's.
///   - body: Starts the work and passes it the callback. It runs at once, before the first
///     suspension, on the caller's actor.
/// - Returns: The arguments of the first call of the callback.
/// - Throws: `CancellationError` when the task is cancelled first — at once, without
///   waiting for the callee. If the task is cancelled before the call, `body` does not run.
/// - Important: Later calls of the callback are ignored, so a callee that calls back twice
///   is harmless (a bare continuation would crash). A callee that never calls back and is
///   never cancelled suspends the task forever. To tell the callee about cancellation, use
///   ``withCancellableCallback(isolation:_:)``.
public func withCallback<each Value: Sendable>(
  isolation: isolated (any Actor)? = #isolation,
  _ body: (_ callback: @escaping @Sendable (repeat each Value) -> Void) -> Void
) async throws(CancellationError) -> (repeat each Value) {
  try await bridgeCallback(isolation: isolation) { callback in
    body(callback)
    return nil
  }
}

/// Calls a cancellable callback-based function and suspends until it calls back; when the
/// task is cancelled first, calls the cancel hook that `body` returned and throws
/// `CancellationError`.
///
/// ```swift
/// let (data, response, error) = try await withCancellableCallback { callback in
///   let task = URLSession.shared.dataTask(with: url, completionHandler: callback)
///   task.resume()
///   return { task.cancel() }     // the cancel hook
/// }
/// ```
///
/// - Parameters:
///   - isolation: The actor `body` runs on; by default the caller's.
///   - body: Starts the work, passes it the callback, and returns the hook that cancels
///     the work. It runs at once, on the caller's actor.
/// - Returns: The arguments of the first call of the callback.
/// - Throws: `CancellationError` when the task is cancelled before the callback is called.
///   The task resumes at once; it does not wait for the callee to react.
/// - Important: The cancel hook runs at most once, only when cancellation wins, on the
///   thread that cancels (or, if that happens while `body` runs, right after `body`
///   returns) — keep it short and thread-safe. It has run by the time the task sees the
///   `CancellationError`. A callback after cancellation is ignored.
public func withCancellableCallback<each Value: Sendable>(
  isolation: isolated (any Actor)? = #isolation,
  _ body: (_ callback: @escaping @Sendable (repeat each Value) -> Void) -> @Sendable () -> Void
) async throws(CancellationError) -> (repeat each Value) {
  try await bridgeCallback(isolation: isolation, body)
}

private func bridgeCallback<each Value: Sendable>(
  isolation: isolated (any Actor)?,
  _ body: (_ callback: @escaping @Sendable (repeat each Value) -> Void) -> (@Sendable () -> Void)?
) async throws(CancellationError) -> (repeat each Value) {
  let bridge = CallbackBridge<repeat each Value>()
  let outcome = await withTaskCancellationHandler {
    await withCheckedContinuation(isolation: isolation) { continuation in
      guard bridge.start(continuation) else { return }
      if let cancelHook = body(bridge.callback) {
        bridge.register(cancelHook: cancelHook)
      }
    }
  } onCancel: {
    bridge.cancel()
  }
  return try outcome.get()
}

/// Runs ``CallbackBridgeState`` under a lock and carries out its decisions outside it.
private final class CallbackBridge<each Value: Sendable>: Sendable {
  typealias Waiter = CheckedContinuation<Result<(repeat each Value), CancellationError>, Never>

  private let state = KilnMutex(CallbackBridgeState<(repeat each Value), Waiter>())

  /// The callback handed to the callee.
  var callback: @Sendable (repeat each Value) -> Void {
    { (values: repeat each Value) in self.deliver((repeat each values)) }
  }

  /// Registers the waiting continuation.
  ///
  /// - Returns: Whether to run the callee; `false` when the task was already cancelled (the
  ///   continuation is then resumed).
  func start(_ waiter: Waiter) -> Bool {
    let action = state.withLock { $0.start(waiter) }
    switch action {
    case .runCallee:
      return true
    case .resumeCancelled(let waiter):
      waiter.resume(returning: .failure(CancellationError()))
      return false
    }
  }

  func register(cancelHook: @escaping @Sendable () -> Void) {
    let runNow = state.withLock { $0.register(cancelHook: cancelHook) }
    runNow?()
  }

  func cancel() {
    let action = state.withLock { $0.cancel() }
    // The hook first: by the time the task sees the cancellation, the callee was told.
    action.cancelHook?()
    action.waiter?.resume(returning: .failure(CancellationError()))
  }

  private func deliver(_ values: (repeat each Value)) {
    let waiter = state.withLock { $0.deliver(values) }
    waiter?.resume(returning: .success(values))
  }
}
