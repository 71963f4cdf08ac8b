import Dispatch
import Foundation
import _KilnSynchronization

/// A one-shot mailbox between a callback, which may be called from any thread, and the
/// thread that blocks until it is called: the engine of `<<-`, `<<+`, `<<~` and
/// ``waitForCallback(timeout:_:)``.
///
/// - The first call of ``callback`` wins; later calls are ignored, so a callee that calls
///   back twice cannot crash or overwrite the value the waiter returns.
/// - A waiter on the main thread keeps the current run loop turning while it waits (see
///   ``wait(until:)``), so main-queue work — including the callback itself — keeps flowing.
final class CallbackRendezvous<each Value: Sendable>: Sendable {
  private struct State {
    var values: (repeat each Value)?
    /// Whether the waiter spins the main run loop and needs a nudge when the values arrive.
    var waiterSpinsMainRunLoop = false
  }

  /// How long the main-thread waiter lets the run loop block before it looks again. Only
  /// matters when nothing wakes the run loop (see ``deliver(_:)``); keeps the worst-case
  /// latency small without spinning.
  private static var runLoopSlice: Double { 0.01 }

  private let state = KilnMutex(State())
  private let arrival = DispatchSemaphore(value: 0)

  init() {}

  /// The callback to hand to the asynchronous function: records its arguments the first
  /// time it is called.
  var callback: @Sendable (repeat each Value) -> Void {
    { (values: repeat each Value) in self.deliver(repeat each values) }
  }

  /// Records `values` unless a value already arrived, and wakes the waiter.
  func deliver(_ values: repeat each Value) {
    let wakeMainRunLoop: Bool? = state.withLock { state in
      guard state.values == nil else { return nil }
      state.values = (repeat each values)
      return state.waiterSpinsMainRunLoop
    }
    guard let wakeMainRunLoop else { return }
    arrival.signal()
    if wakeMainRunLoop {
      // The waiter may be parked inside `RunLoop.run(mode:before:)`, which a semaphore does
      // not interrupt. An empty main-queue block wakes the main run loop at once.
      DispatchQueue.main.async {}
    }
  }

  /// Blocks until the callback is called and returns its arguments.
  func wait() -> (repeat each Value) {
    // A wait without a deadline only returns with values.
    wait(until: nil)!
  }

  /// Blocks until the callback is called or `deadline` passes.
  ///
  /// On the main thread the wait runs the current run loop in short slices instead of
  /// blocking it, so blocks submitted to the main queue (and run-loop sources and timers)
  /// keep running: a callback delivered through the main queue arrives instead of
  /// deadlocking. Elsewhere the thread simply blocks.
  ///
  /// - Parameters:
  ///   - deadline: When to give up; `nil` waits as long as it takes.
  ///   - spinningRunLoop: Whether to keep the current thread's run loop turning while
  ///     waiting; by default on the main thread only.
  /// - Returns: The callback's arguments, or `nil` when `deadline` passed first.
  func wait(until deadline: DispatchTime?, spinningRunLoop: Bool = Thread.isMainThread) -> (repeat each Value)? {
    if spinningRunLoop { return spinRunLoop(until: deadline) }
    if let deadline {
      // After a timeout, a value that raced in is still better than nothing.
      _ = arrival.wait(timeout: deadline)
    } else {
      arrival.wait()
    }
    return arrivedValues()
  }

  private func arrivedValues() -> (repeat each Value)? {
    state.withLock { $0.values }
  }

  private func spinRunLoop(until deadline: DispatchTime?) -> (repeat each Value)? {
    let isMainThread = Thread.isMainThread
    state.withLock { $0.waiterSpinsMainRunLoop = isMainThread }
    while true {
      if let values = arrivedValues() { return values }
      var slice = Self.runLoopSlice
      if let deadline {
        let now = DispatchTime.now()
        guard now < deadline else { return nil }
        slice = min(slice, Double(deadline.uptimeNanoseconds - now.uptimeNanoseconds) / 1e9)
      }
      // On the main run loop, `run(mode:before:)` also services the main queue — unless
      // the main queue is already running a block further up this stack, which GCD never
      // re-enters. When the run loop has nothing to run at all it returns `false` at once:
      // block on the semaphore for the slice instead of spinning.
      if !RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: slice)) {
        _ = arrival.wait(timeout: .now() + slice)
      }
    }
  }
}
