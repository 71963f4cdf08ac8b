import Dispatch
import _KilnSynchronization

/// The pending operations of `DispatchQueue.once(operationId:)`, by operation ID.
///
/// An ID maps to the timer of its newest call. A timer runs its block only if it is still
/// the one registered for its ID when it fires ("claims" the ID), so of a burst of calls
/// exactly one block runs — the newest — however the firing of a replaced timer races with
/// its cancellation. All access goes through one lock; blocks and timer operations run
/// outside it.
final class OnceRegistry: Sendable {
  static let shared = OnceRegistry()

  private let timers = KilnMutex([String: TimerHandle]())

  /// Starts a one-shot timer for `operationId` on `queue` that runs `block` at `start`,
  /// replacing (cancelling) the pending timer of the same ID, if any.
  func schedule(
    operationId: String,
    on queue: DispatchQueue,
    start: TimerStart,
    leeway: DispatchTimeInterval?,
    qos: DispatchQoS,
    flags: DispatchWorkItemFlags,
    block: @escaping @Sendable () -> Void
  ) -> any DispatchSourceTimer {
    let timer = DispatchSource.makeTimerSource(queue: queue)
    let handle = TimerHandle(timer)
    timer.setEventHandler(qos: qos, flags: flags) { [self] in
      let isNewest = claim(operationId, by: handle)
      handle.timer.cancel()
      if isNewest { block() }
    }
    // Runs when the timer is cancelled from anywhere, the caller included: forget it then,
    // unless a newer call already replaced it.
    timer.setCancelHandler { [self] in forget(operationId, ifStill: handle) }
    let leeway = leeway ?? .nanoseconds(0)
    switch start {
    case .uptime(let deadline): timer.schedule(deadline: deadline, leeway: leeway)
    case .wallClock(let deadline): timer.schedule(wallDeadline: deadline, leeway: leeway)
    }
    let replaced = timers.withLock { timers in
      let replaced = timers[operationId]
      timers[operationId] = handle
      return replaced
    }
    replaced?.timer.cancel()
    // Started only once registered: a timer due at once must find itself the newest.
    timer.resume()
    return timer
  }

  /// Cancels the pending timer of `operationId`.
  ///
  /// - Returns: Whether there was one.
  func cancel(operationId: String) -> Bool {
    let pending = timers.withLock { $0.removeValue(forKey: operationId) }
    pending?.timer.cancel()
    return pending != nil
  }

  /// Whether a timer is pending for `operationId`.
  func isPending(operationId: String) -> Bool {
    timers.withLock { $0[operationId] != nil }
  }

  /// Unregisters `handle` if it is still the newest timer of `operationId`.
  ///
  /// - Returns: Whether it was, i.e. whether its block should run.
  private func claim(_ operationId: String, by handle: TimerHandle) -> Bool {
    timers.withLock { timers in
      guard timers[operationId] === handle else { return false }
      timers[operationId] = nil
      return true
    }
  }

  private func forget(_ operationId: String, ifStill handle: TimerHandle) {
    _ = claim(operationId, by: handle)
  }
}
