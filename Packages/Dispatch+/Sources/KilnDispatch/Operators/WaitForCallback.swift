public import Dispatch

/// The error of ``waitForCallback(timeout:_:)`` and ``waitForCallback(on:timeout:_:)``
/// when the completion handler was not called in time.
public struct CallbackTimeoutError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The time limit that passed.
  public let timeout: Duration

  /// Creates the error for a time limit.
  ///
  /// - Parameter timeout: The time limit that passed.
  public init(timeout: Duration) {
    self.timeout = timeout
  }

  public var description: String {
    "The completion handler was not called within \(timeout)"
  }
}

/// Calls an asynchronous function on the current thread and blocks until it calls its
/// completion handler or `timeout` passes: `<<-` with a time limit.
///
/// ```swift
/// let (data, error) = try waitForCallback(timeout: .seconds(5)) { fetch(url, completion: $0) }
/// ```
///
/// - Parameters:
///   - timeout: How long to wait for the handler. Zero or less checks once, after the
///     operation returned.
///   - operation: Starts the asynchronous work and passes it the completion handler; runs
///     at once on the calling thread.
/// - Returns: The arguments of the first call to the handler.
/// - Throws: ``CallbackTimeoutError`` when the handler was not called in time. A later call
///   is ignored.
/// - Important: The waiting rules of `<<-` apply (first call wins; on the main thread the
///   run loop keeps turning).
/// - Warning: This blocks a thread. Block a serial queue of your own, never the global queue
///   (on Linux a blocked global-queue thread delays all other GCD work by about a second while
///   the pool grows) and never a Swift concurrency task (its pool does not grow at all); from
///   async code use ``withCallback(isolation:_:)``, which suspends instead.
@discardableResult
public func waitForCallback<each Value: Sendable>(
  timeout: Duration,
  _ operation: (_ callback: @escaping @Sendable (repeat each Value) -> Void) -> Void
) throws(CallbackTimeoutError) -> (repeat each Value) {
  let deadline = DispatchTime.after(timeout)
  let rendezvous = CallbackRendezvous<repeat each Value>()
  operation(rendezvous.callback)
  guard let values = rendezvous.wait(until: deadline) else { throw CallbackTimeoutError(timeout: timeout) }
  return values
}

/// Calls an asynchronous function on `queue` and blocks until it calls its completion
/// handler or `timeout` passes: `<<~queue ~~~ { }` with a time limit.
///
/// ```swift
/// let saved = try waitForCallback(on: database, timeout: .seconds(2)) { store.save(record, completion: $0) }
/// ```
///
/// - Parameters:
///   - queue: The queue to start the operation on; it runs at once when the caller
///     already runs on `queue`.
///   - timeout: How long to wait for the handler, counted from the call.
///   - operation: Starts the asynchronous work and passes it the completion handler.
/// - Returns: The arguments of the first call to the handler.
/// - Throws: ``CallbackTimeoutError`` when the handler was not called in time. A later call
///   is ignored.
/// - Warning: This blocks a thread. Block a serial queue of your own, never the global queue
///   (on Linux a blocked global-queue thread delays all other GCD work by about a second while
///   the pool grows) and never a Swift concurrency task (its pool does not grow at all); from
///   async code use ``withCallback(isolation:_:)``, which suspends instead.
@discardableResult
public func waitForCallback<each Value: Sendable>(
  on queue: DispatchQueue,
  timeout: Duration,
  _ operation: @escaping @Sendable (_ callback: @escaping @Sendable (repeat each Value) -> Void) -> Void
) throws(CallbackTimeoutError) -> (repeat each Value) {
  let deadline = DispatchTime.after(timeout)
  let rendezvous = CallbackRendezvous<repeat each Value>()
  run(on: queue) { operation(rendezvous.callback) }
  guard let values = rendezvous.wait(until: deadline) else { throw CallbackTimeoutError(timeout: timeout) }
  return values
}
