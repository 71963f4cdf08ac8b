/// The state machine behind ``withCallback(isolation:_:)`` and
/// ``withCancellableCallback(isolation:_:)``: a value type that decides, for every event,
/// what must happen, and leaves the doing (resuming, calling the cancel hook) to its owner,
/// outside any lock.
///
/// Events: the awaiting task starts waiting (``start(_:)``), the callee hands over its cancel
/// hook (``register(cancelHook:)``), the callback is called (``deliver(_:)``, any number of
/// times), the task is cancelled (``cancel()``, at any moment, even before ``start(_:)``).
/// Guarantees:
/// - the waiter is resumed exactly once — with the first delivered value, or with
///   cancellation, whichever comes first;
/// - the cancel hook is called at most once, and only when cancellation won — also when the
///   hook is registered after the cancellation;
/// - a cancellation that came before ``start(_:)`` resumes at once and the callee never runs.
///
/// `Waiter` is what gets resumed (a continuation in production, anything in tests).
struct CallbackBridgeState<Value, Waiter> {
  /// A cancel hook handed over by the callee.
  typealias CancelHook = @Sendable () -> Void

  private enum Phase {
    /// Not waiting yet.
    case idle
    /// The callee runs; the waiter waits.
    case waiting(Waiter)
    /// The waiter was resumed with a value.
    case delivered
    /// The task was cancelled (before or while waiting).
    case cancelled
  }

  /// What to do when the waiter starts.
  enum StartAction {
    /// Call the callee.
    case runCallee
    /// The task is already cancelled: resume the waiter with cancellation, skip the callee.
    case resumeCancelled(Waiter)
  }

  /// What to do when the task is cancelled.
  struct CancelAction {
    /// The waiter to resume with cancellation, if it was waiting.
    var waiter: Waiter?
    /// The cancel hook to call, if the callee already handed one over.
    var cancelHook: CancelHook?
  }

  private var phase = Phase.idle
  private var cancelHook: CancelHook?
  private var cancelHookCalled = false

  init() {}

  /// The waiter starts waiting.
  mutating func start(_ waiter: Waiter) -> StartAction {
    switch phase {
    case .idle:
      phase = .waiting(waiter)
      return .runCallee
    case .cancelled:
      return .resumeCancelled(waiter)
    case .waiting, .delivered:
      preconditionFailure("A callback bridge started twice")
    }
  }

  /// The callback was called with `value`.
  ///
  /// - Returns: The waiter to resume with `value` — only for the first call, and only
  ///   while cancellation has not won.
  mutating func deliver(_ value: Value) -> Waiter? {
    guard case .waiting(let waiter) = phase else { return nil }
    phase = .delivered
    cancelHook = nil
    return waiter
  }

  /// The task was cancelled.
  mutating func cancel() -> CancelAction {
    switch phase {
    case .idle:
      phase = .cancelled
      return CancelAction()
    case .waiting(let waiter):
      phase = .cancelled
      return CancelAction(waiter: waiter, cancelHook: takeCancelHook())
    case .delivered, .cancelled:
      return CancelAction()
    }
  }

  /// The callee handed over its cancel hook.
  ///
  /// - Returns: The hook, to be called now, when cancellation already won; `nil` otherwise
  ///   (it is kept for a later cancellation, or dropped when a value was delivered).
  mutating func register(cancelHook hook: @escaping CancelHook) -> CancelHook? {
    switch phase {
    case .idle, .waiting:
      cancelHook = hook
      return nil
    case .delivered:
      return nil
    case .cancelled:
      cancelHook = hook
      return takeCancelHook()
    }
  }

  private mutating func takeCancelHook() -> CancelHook? {
    guard !cancelHookCalled, let hook = cancelHook else { return nil }
    cancelHookCalled = true
    cancelHook = nil
    return hook
  }
}
