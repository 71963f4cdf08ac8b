import Foundation
import _KilnSynchronization

/// Runs `body` on a thread of its own and returns what it returned or threw.
///
/// For blocking work in an async test (a socket read, a child's output, a script that
/// starts a server): a blocked thread of Swift's cooperative pool (two on a two-core
/// machine) stalls every other task of the test process meanwhile.
///
/// The result crosses back through a lock that ThreadSanitizer sees. Resuming a
/// continuation from a foreign thread is ordered by the concurrency runtime's own atomics,
/// which ThreadSanitizer does not see when the thread finishes before the awaiting task
/// suspends: it then reports the result's memory, written on the thread and read by the
/// task, as a data race.
///
/// ```swift
/// let line = try await runOnOwnThread { try child.readLine(timeout: .seconds(5)) }
/// ```
///
/// - Parameter body: The blocking work.
/// - Returns: What `body` returned.
/// - Throws: What `body` threw.
public func runOnOwnThread<Value: Sendable, Failure: Error>(
  _ body: @escaping @Sendable () throws(Failure) -> Value
) async throws(Failure) -> Value {
  let handoff = Handoff<Result<Value, Failure>>()
  await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
    Thread {
      handoff.put(Result { () throws(Failure) -> Value in try body() })
      continuation.resume()
    }.start()
  }
  return try handoff.take().get()
}

/// One value passed from the thread that produced it to the task that awaited it.
private final class Handoff<Value: Sendable>: Sendable {
  private let slot = KilnMutex<Value?>(nil)

  func put(_ value: Value) {
    slot.withLock { $0 = value }
  }

  func take() -> Value {
    slot.withLock { slot -> Value in
      guard let value = slot.take() else { preconditionFailure("the thread resumed without a value") }
      return value
    }
  }
}
