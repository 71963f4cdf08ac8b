public import Dispatch
public import Foundation

/// Runs `body` while holding `lock`, and returns its result.
///
/// ```swift
/// let lock = NSLock()
/// let count = synchronized(lock) { counter.increment() }
/// ```
///
/// The lock is released however `body` exits, by returning or by throwing.
///
/// - Parameters:
///   - lock: The lock to hold: an `NSLock`, `NSRecursiveLock` or any other `NSLocking`.
///   - body: The critical section.
/// - Returns: What `body` returns.
/// - Throws: What `body` throws.
/// - Important: Re-entering with the same non-recursive lock deadlocks, as it does with
///   `lock()`; use `NSRecursiveLock` for code that re-enters.
public func synchronized<Lock: NSLocking, Result, Failure: Error>(
  _ lock: Lock,
  _ body: () throws(Failure) -> Result
) throws(Failure) -> Result {
  lock.lock()
  defer { lock.unlock() }
  return try body()
}

/// Runs `body` on the serial `queue`, waiting for it, and returns its result: the queue
/// used as a lock.
///
/// ```swift
/// let state = DispatchQueue(label: "state")
/// let snapshot = synchronized(state) { items }
/// ```
///
/// Re-entrant: called from `queue` itself (or from a queue that targets it) `body` runs
/// inline, where `queue.sync` would deadlock.
///
/// - Parameters:
///   - queue: A serial queue guarding the state `body` touches.
///   - body: The critical section.
/// - Returns: What `body` returns.
/// - Throws: What `body` throws.
public func synchronized<Result, Failure: Error>(
  _ queue: DispatchQueue,
  _ body: () throws(Failure) -> Result
) throws(Failure) -> Result {
  if QueueIdentity.isCurrent(queue) { return try body() }
  let outcome: Swift.Result<Result, Failure> = queue.sync {
    do throws(Failure) {
      return .success(try body())
    } catch {
      return .failure(error)
    }
  }
  return try outcome.get()
}
