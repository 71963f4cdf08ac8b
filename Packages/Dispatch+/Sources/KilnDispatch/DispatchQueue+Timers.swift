public import Dispatch
public import Foundation

// One-shot and repeating work on a queue, with the timer returned for cancelling.
//
// Every helper returns the `DispatchSourceTimer` it started. Keeping it is optional: the
// timer keeps itself alive until it has fired (one-shot) or is cancelled (repeating), so
// `queue.async(after: 1) { … }` on its own line works. `cancel()` on the returned timer
// stops work that has not started yet.

extension DispatchQueue {
  // MARK: - After a delay

  /// Runs `block` on this queue after `seconds`.
  ///
  /// ```swift
  /// let timer = DispatchQueue.main.async(after: 0.5) { hideBanner() }
  /// timer.cancel()   // changed our mind
  /// ```
  ///
  /// Never fires early: the delay is a lower bound, measured on the uptime clock.
  ///
  /// - Parameters:
  ///   - seconds: The delay; zero or negative runs the block as soon as possible. Delays too
  ///     large for GCD mean "never".
  ///   - leeway: How late the system may fire to save power; by default as precise as it
  ///     allows.
  ///   - qos: The quality of service of the block; by default the queue's.
  ///   - flags: Work item flags for the block.
  ///   - block: The work to run once.
  /// - Returns: The started timer; cancel it to drop the block before it runs. Discarding it
  ///   is fine.
  /// - Precondition: `seconds` is not NaN.
  @discardableResult
  public func async(
    after seconds: Double,
    leeway: DispatchTimeInterval? = nil,
    qos: DispatchQoS = .unspecified,
    flags: DispatchWorkItemFlags = [],
    execute block: @escaping @Sendable () -> Void
  ) -> any DispatchSourceTimer {
    startOneShotTimer(.uptime(.after(seconds: seconds)), leeway: leeway, qos: qos, flags: flags, block: block)
  }

  /// Runs `block` on this queue after `delay`.
  ///
  /// ```swift
  /// queue.async(after: .milliseconds(250)) { flush() }
  /// ```
  ///
  /// Never fires early: the delay is a lower bound, measured on the uptime clock.
  ///
  /// - Parameters:
  ///   - delay: The delay; zero or negative runs the block as soon as possible.
  ///   - leeway: How late the system may fire to save power; by default as precise as it
  ///     allows.
  ///   - qos: The quality of service of the block; by default the queue's.
  ///   - flags: Work item flags for the block.
  ///   - block: The work to run once.
  /// - Returns: The started timer; cancel it to drop the block before it runs. Discarding it
  ///   is fine.
  @discardableResult
  public func async(
    after delay: Duration,
    leeway: DispatchTimeInterval? = nil,
    qos: DispatchQoS = .unspecified,
    flags: DispatchWorkItemFlags = [],
    execute block: @escaping @Sendable () -> Void
  ) -> any DispatchSourceTimer {
    startOneShotTimer(.uptime(.after(delay)), leeway: leeway, qos: qos, flags: flags, block: block)
  }

  // MARK: - At a date

  /// Runs `block` on this queue at `date`.
  ///
  /// ```swift
  /// queue.async(at: midnight) { rotateLogs() }
  /// ```
  ///
  /// The deadline is on the wall clock: it follows changes to the system clock, and a date
  /// in the past runs the block at once.
  ///
  /// - Parameters:
  ///   - date: When to run the block.
  ///   - leeway: How late the system may fire to save power; by default as precise as it
  ///     allows.
  ///   - qos: The quality of service of the block; by default the queue's.
  ///   - flags: Work item flags for the block.
  ///   - block: The work to run once.
  /// - Returns: The started timer; cancel it to drop the block before it runs. Discarding it
  ///   is fine.
  @discardableResult
  public func async(
    at date: Date,
    leeway: DispatchTimeInterval? = nil,
    qos: DispatchQoS = .unspecified,
    flags: DispatchWorkItemFlags = [],
    execute block: @escaping @Sendable () -> Void
  ) -> any DispatchSourceTimer {
    startOneShotTimer(.wallClock(.at(date)), leeway: leeway, qos: qos, flags: flags, block: block)
  }

  // MARK: - Repeatedly

  /// Runs `block` on this queue every `interval` seconds until the timer is cancelled;
  /// `block` receives the timer, so it can cancel itself.
  ///
  /// ```swift
  /// queue.async(every: 2, startingIn: 0) { timer in
  ///   if jobIsDone() { timer.cancel() }   // the last run
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - interval: Seconds between two runs.
  ///   - startingIn: Seconds until the first run; by default one `interval`.
  ///   - startingAt: The date of the first run, on the wall clock; a date in the past
  ///     starts at once.
  ///   - leeway: How late the system may fire to save power; by default as precise as it
  ///     allows.
  ///   - qos: The quality of service of the block; by default the queue's.
  ///   - flags: Work item flags for the block.
  ///   - block: The work to run each time; receives the timer.
  /// - Returns: The started timer. It runs until cancelled, even when the result is
  ///   discarded: cancel it from outside or from inside `block`.
  /// - Precondition: `interval` is positive and finite; at most one of `startingIn` and
  ///   `startingAt` is given.
  @discardableResult
  public func async(
    every interval: Double,
    startingIn: Double? = nil,
    startingAt: Date? = nil,
    leeway: DispatchTimeInterval? = nil,
    qos: DispatchQoS = .unspecified,
    flags: DispatchWorkItemFlags = [],
    execute block: @escaping @Sendable (_ timer: any DispatchSourceTimer) -> Void
  ) -> any DispatchSourceTimer {
    precondition(interval > 0 && interval.isFinite, "async(every:) needs a positive, finite interval, not \(interval)")
    let period = Nanoseconds.of(seconds: interval)
    return startRepeatingTimer(
      period: period,
      start: repeatingStart(
        period: period, startingIn: startingIn.map(Nanoseconds.of(seconds:)), startingAt: startingAt),
      leeway: leeway,
      qos: qos,
      flags: flags,
      block: block
    )
  }

  /// Runs `block` on this queue every `interval` seconds until the returned timer is
  /// cancelled.
  ///
  /// ```swift
  /// let heartbeat = queue.async(every: 30) { sendHeartbeat() }
  /// …
  /// heartbeat.cancel()
  /// ```
  ///
  /// - Parameters:
  ///   - interval: Seconds between two runs.
  ///   - startingIn: Seconds until the first run; by default one `interval`.
  ///   - startingAt: The date of the first run, on the wall clock; a date in the past
  ///     starts at once.
  ///   - leeway: How late the system may fire to save power; by default as precise as it
  ///     allows.
  ///   - qos: The quality of service of the block; by default the queue's.
  ///   - flags: Work item flags for the block.
  ///   - block: The work to run each time.
  /// - Returns: The started timer. It runs until cancelled, even when the result is
  ///   discarded.
  /// - Precondition: `interval` is positive and finite; at most one of `startingIn` and
  ///   `startingAt` is given.
  @discardableResult
  public func async(
    every interval: Double,
    startingIn: Double? = nil,
    startingAt: Date? = nil,
    leeway: DispatchTimeInterval? = nil,
    qos: DispatchQoS = .unspecified,
    flags: DispatchWorkItemFlags = [],
    execute block: @escaping @Sendable () -> Void
  ) -> any DispatchSourceTimer {
    async(
      every: interval,
      startingIn: startingIn,
      startingAt: startingAt,
      leeway: leeway,
      qos: qos,
      flags: flags
    ) { _ in block() }
  }

  /// Runs `block` on this queue every `interval` until the timer is cancelled; `block`
  /// receives the timer, so it can cancel itself.
  ///
  /// ```swift
  /// queue.async(every: .milliseconds(100), startingIn: .zero) { timer in
  ///   if progress.isFinished { timer.cancel() }
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - interval: The time between two runs.
  ///   - startingIn: The time until the first run; by default one `interval`.
  ///   - startingAt: The date of the first run, on the wall clock; a date in the past
  ///     starts at once.
  ///   - leeway: How late the system may fire to save power; by default as precise as it
  ///     allows.
  ///   - qos: The quality of service of the block; by default the queue's.
  ///   - flags: Work item flags for the block.
  ///   - block: The work to run each time; receives the timer.
  /// - Returns: The started timer. It runs until cancelled, even when the result is
  ///   discarded.
  /// - Precondition: `interval` is positive; at most one of `startingIn` and `startingAt`
  ///   is given.
  @discardableResult
  public func async(
    every interval: Duration,
    startingIn: Duration? = nil,
    startingAt: Date? = nil,
    leeway: DispatchTimeInterval? = nil,
    qos: DispatchQoS = .unspecified,
    flags: DispatchWorkItemFlags = [],
    execute block: @escaping @Sendable (_ timer: any DispatchSourceTimer) -> Void
  ) -> any DispatchSourceTimer {
    precondition(interval > .zero, "async(every:) needs a positive interval, not \(interval)")
    let period = Nanoseconds.of(interval)
    return startRepeatingTimer(
      period: period,
      start: repeatingStart(period: period, startingIn: startingIn.map(Nanoseconds.of), startingAt: startingAt),
      leeway: leeway,
      qos: qos,
      flags: flags,
      block: block
    )
  }

  /// Runs `block` on this queue every `interval` until the returned timer is cancelled.
  ///
  /// - Parameters:
  ///   - interval: The time between two runs.
  ///   - startingIn: The time until the first run; by default one `interval`.
  ///   - startingAt: The date of the first run, on the wall clock; a date in the past
  ///     starts at once.
  ///   - leeway: How late the system may fire to save power; by default as precise as it
  ///     allows.
  ///   - qos: The quality of service of the block; by default the queue's.
  ///   - flags: Work item flags for the block.
  ///   - block: The work to run each time.
  /// - Returns: The started timer. It runs until cancelled, even when the result is
  ///   discarded.
  /// - Precondition: `interval` is positive; at most one of `startingIn` and `startingAt`
  ///   is given.
  @discardableResult
  public func async(
    every interval: Duration,
    startingIn: Duration? = nil,
    startingAt: Date? = nil,
    leeway: DispatchTimeInterval? = nil,
    qos: DispatchQoS = .unspecified,
    flags: DispatchWorkItemFlags = [],
    execute block: @escaping @Sendable () -> Void
  ) -> any DispatchSourceTimer {
    async(
      every: interval,
      startingIn: startingIn,
      startingAt: startingAt,
      leeway: leeway,
      qos: qos,
      flags: flags
    ) { _ in block() }
  }

  // MARK: - Helpers

  private func repeatingStart(period: UInt64, startingIn: UInt64?, startingAt: Date?) -> TimerStart {
    precondition(
      startingIn == nil || startingAt == nil,
      "async(every:) takes startingIn or startingAt, not both"
    )
    if let startingAt { return .wallClock(.at(startingAt)) }
    return .uptime(.after(nanoseconds: startingIn ?? period))
  }

  private func startRepeatingTimer(
    period: UInt64,
    start: TimerStart,
    leeway: DispatchTimeInterval?,
    qos: DispatchQoS,
    flags: DispatchWorkItemFlags,
    block: @escaping @Sendable (any DispatchSourceTimer) -> Void
  ) -> any DispatchSourceTimer {
    startTimer(
      start,
      repeating: .clamped(nanoseconds: max(period, 1)),
      leeway: leeway,
      qos: qos,
      flags: flags
    ) { handle in block(handle.timer) }
  }
}
