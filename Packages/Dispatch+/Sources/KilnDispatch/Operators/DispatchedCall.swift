public import Dispatch

/// A function call sent to a queue, whose return value arrives later.
///
/// `+>>`, `~>>` and ``DispatchRoute/async(_:)`` return one. Route its value to a handler
/// with the operators, or await it:
///
/// ```swift
/// parse ~>> (data) +>> { document in show(document) }        // handler on the main queue
/// parse ~>> (data) ~>> worker ~>> { document in index(document) }  // handler on `worker`
/// let document = await (parse ~>> (data)).value               // from async code
/// ```
///
/// Any number of handlers may observe one call, before or after it returns; each runs once.
/// Discarding the call is fine: the function still runs.
public struct DispatchedCall<Output: Sendable>: Sendable {
  let pending: PendingResult<Output>

  /// The queue that handlers without a queue of their own run on; `nil` means the global
  /// concurrent queue.
  public let handlerQueue: DispatchQueue?

  init(pending: PendingResult<Output>, handlerQueue: DispatchQueue? = nil) {
    self.pending = pending
    self.handlerQueue = handlerQueue
  }

  /// The function's return value, once it has returned; `nil` before.
  public var currentValue: Output? {
    pending.value
  }

  /// The function's return value.
  ///
  /// Suspends until the function has run on its queue. The function runs whatever happens
  /// to the awaiting task, so cancelling the task does not end the wait early.
  public var value: Output {
    get async {
      if let output = pending.value { return output }
      return await withCheckedContinuation { (continuation: CheckedContinuation<Output, Never>) in
        pending.observe { continuation.resume(returning: $0) }
      }
    }
  }

  /// This call with its handlers routed to `queue`: what `call ~>> queue` does.
  ///
  /// - Parameter queue: The queue for handlers that name none.
  /// - Returns: A call sharing this one's result.
  public func delivering(on queue: DispatchQueue) -> DispatchedCall {
    DispatchedCall(pending: pending, handlerQueue: queue)
  }

  /// Runs `handler` with the function's return value on a queue.
  ///
  /// ```swift
  /// (checksum ~>> (file)).onResult(on: .main) { sum in label.text = sum }
  /// ```
  ///
  /// - Parameters:
  ///   - queue: The queue to run `handler` on; by default ``handlerQueue``, else the global
  ///     concurrent queue.
  ///   - handler: Receives the return value once the function has returned.
  public func onResult(on queue: DispatchQueue? = nil, _ handler: @escaping @Sendable (Output) -> Void) {
    let queue = queue ?? handlerQueue ?? .global()
    pending.observe { output in queue.async { handler(output) } }
  }

  /// Runs `handler` with the function's return value on the main actor: what
  /// `call +>> { value in }` does.
  ///
  /// - Parameter handler: Receives the return value on the main queue, always
  ///   asynchronously.
  public func onMainActor(_ handler: @escaping @MainActor (Output) -> Void) {
    pending.observe { output in
      DispatchQueue.main.async { MainActor.assumeIsolated { handler(output) } }
    }
  }
}
