public import Dispatch
public import Foundation

// Debouncing: many triggers, one run.

extension DispatchQueue {
  /// Runs `block` once on this queue after `interval` seconds — unless another call with the
  /// same `operationId` comes first, which replaces it: of a burst of calls only the newest
  /// block runs, `interval` after the last call (a debounce).
  ///
  /// ```swift
  /// // Called after every downloaded record, from many threads:
  /// database.once(operationId: "save-database", after: 2) { database.save() }
  /// ```
  ///
  /// Operation IDs are global: a call on another queue replaces the pending call too, and
  /// the newest call's queue runs the block. Once a block has started, the next call with
  /// its ID starts a new burst. Safe to call from any thread.
  ///
  /// - Parameters:
  ///   - operationId: Identifies the operation; calls with the same ID coalesce.
  ///   - interval: Seconds to wait after this call; by default none (as soon as possible,
  ///     still replaceable until then).
  ///   - date: When to run instead, on the wall clock; a date in the past runs at once.
  ///   - leeway: How late the system may fire to save power; by default as precise as it
  ///     allows.
  ///   - qos: The quality of service of the block; by default the queue's.
  ///   - flags: Work item flags for the block.
  ///   - block: The work to run.
  /// - Returns: This call's timer. Cancelling it cancels the pending operation (if this call
  ///   is still the newest); ``cancelOnce(operationId:)`` does so without the timer.
  /// - Precondition: At most one of `interval` and `date` is given.
  @discardableResult
  public func once(
    operationId: String,
    after interval: Double? = nil,
    at date: Date? = nil,
    leeway: DispatchTimeInterval? = nil,
    qos: DispatchQoS = .unspecified,
    flags: DispatchWorkItemFlags = [],
    execute block: @escaping @Sendable () -> Void
  ) -> any DispatchSourceTimer {
    precondition(interval == nil || date == nil, "once(operationId:) takes after or at, not both")
    let start: TimerStart =
      if let date { .wallClock(.at(date)) } else { .uptime(.after(seconds: interval ?? 0)) }
    return OnceRegistry.shared.schedule(
      operationId: operationId,
      on: self,
      start: start,
      leeway: leeway,
      qos: qos,
      flags: flags,
      block: block
    )
  }

  /// Runs `block` once on this queue after `delay` — unless another call with the same
  /// `operationId` comes first, which replaces it (a debounce).
  ///
  /// ```swift
  /// searchQueue.once(operationId: "search", after: .milliseconds(300)) { search(query) }
  /// ```
  ///
  /// - Parameters:
  ///   - operationId: Identifies the operation; calls with the same ID coalesce.
  ///   - delay: The time to wait after this call.
  ///   - leeway: How late the system may fire to save power; by default as precise as it
  ///     allows.
  ///   - qos: The quality of service of the block; by default the queue's.
  ///   - flags: Work item flags for the block.
  ///   - block: The work to run.
  /// - Returns: This call's timer; cancelling it cancels the pending operation if this call
  ///   is still the newest.
  @discardableResult
  public func once(
    operationId: String,
    after delay: Duration,
    leeway: DispatchTimeInterval? = nil,
    qos: DispatchQoS = .unspecified,
    flags: DispatchWorkItemFlags = [],
    execute block: @escaping @Sendable () -> Void
  ) -> any DispatchSourceTimer {
    OnceRegistry.shared.schedule(
      operationId: operationId,
      on: self,
      start: .uptime(.after(delay)),
      leeway: leeway,
      qos: qos,
      flags: flags,
      block: block
    )
  }

  /// Cancels the pending block of `operationId`, whichever queue it was scheduled on.
  ///
  /// - Parameter operationId: The operation to cancel.
  /// - Returns: Whether a block was pending. A block that already started is not stopped.
  @discardableResult
  public static func cancelOnce(operationId: String) -> Bool {
    OnceRegistry.shared.cancel(operationId: operationId)
  }

  /// Whether a block is pending for `operationId`.
  ///
  /// - Parameter operationId: The operation to look up.
  /// - Returns: Whether a call with this ID waits to run.
  public static func isOncePending(operationId: String) -> Bool {
    OnceRegistry.shared.isPending(operationId: operationId)
  }
}
