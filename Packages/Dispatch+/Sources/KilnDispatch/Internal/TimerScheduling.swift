import Dispatch

/// A dispatch timer that `@Sendable` closures may capture.
///
/// `@unchecked Sendable` is sound: the only stored property is a `let` reference to a
/// dispatch source, and every dispatch source operation (`schedule`, `resume`, `cancel`,
/// `isCancelled`, setting handlers) is thread-safe in libdispatch. The overlay's concrete
/// `DispatchSource` class is declared `Sendable` for that reason; only the
/// `DispatchSourceTimer` protocol existential lacks the annotation.
final class TimerHandle: @unchecked Sendable {
  let timer: any DispatchSourceTimer

  init(_ timer: any DispatchSourceTimer) {
    self.timer = timer
  }
}

/// When a timer first fires: on the uptime clock (a delay, unaffected by changes to the
/// system clock) or on the wall clock (a date, which follows them).
enum TimerStart {
  case uptime(DispatchTime)
  case wallClock(DispatchWallTime)
}

extension DispatchQueue {
  /// Creates, schedules and starts a timer whose event handler runs `handler` on this queue.
  ///
  /// The event handler holds the timer, so the timer stays alive — and fires — even when
  /// the caller drops every reference to it, until it is cancelled: cancelling a dispatch
  /// source releases its handlers, which breaks the cycle. One-shot callers cancel the
  /// timer when it fires.
  func startTimer(
    _ start: TimerStart,
    repeating interval: DispatchTimeInterval = .never,
    leeway: DispatchTimeInterval?,
    qos: DispatchQoS,
    flags: DispatchWorkItemFlags,
    handler: @escaping @Sendable (TimerHandle) -> Void
  ) -> any DispatchSourceTimer {
    let timer = DispatchSource.makeTimerSource(queue: self)
    let handle = TimerHandle(timer)
    timer.setEventHandler(qos: qos, flags: flags) { handler(handle) }
    let leeway = leeway ?? .nanoseconds(0)
    switch start {
    case .uptime(let deadline):
      timer.schedule(deadline: deadline, repeating: interval, leeway: leeway)
    case .wallClock(let deadline):
      timer.schedule(wallDeadline: deadline, repeating: interval, leeway: leeway)
    }
    timer.resume()
    return timer
  }

  /// A one-shot timer: runs `block` once at `start`, cancelling itself first so that
  /// it reads as finished (`isCancelled`) inside `block` and is released afterwards.
  func startOneShotTimer(
    _ start: TimerStart,
    leeway: DispatchTimeInterval?,
    qos: DispatchQoS,
    flags: DispatchWorkItemFlags,
    block: @escaping @Sendable () -> Void
  ) -> any DispatchSourceTimer {
    startTimer(start, leeway: leeway, qos: qos, flags: flags) { handle in
      handle.timer.cancel()
      block()
    }
  }
}
