import Dispatch
import Foundation
import _KilnSynchronization

/// An object whose only job is to be identical to itself: the mark KilnDispatch leaves in a
/// queue's specifics so that it can later tell whether code is running on that queue.
final class QueueToken: Sendable {}

/// Answers "am I already running on this queue?", the question behind every re-entrancy
/// guard in KilnDispatch (`.sync` run inline, `<<+` from the main queue, `synchronized`).
///
/// GCD has no public "current queue" query, so KilnDispatch stores a ``QueueToken`` in each
/// queue it is asked about (under a private `DispatchSpecificKey`, invisible to the queue's
/// owner) and compares it with `DispatchQueue.getSpecific(key:)`, which reads the specifics
/// of the queue running the current block — or of its target queues when it has none. So
/// code running on a queue that targets a serial queue `q` is, correctly, "on `q`" (a
/// `q.sync` from there would deadlock), unless that inner queue carries a token of its own.
///
/// Global (root) queues refuse specifics — libdispatch crashes the process — and never need
/// the guard (a concurrent queue cannot deadlock on itself), so they are recognised by their
/// `com.apple.root.` label and reported as "not current".
enum QueueIdentity {
  private static let key = DispatchSpecificKey<QueueToken>()

  /// Serialises token installation, so two threads asking about a new queue at the same
  /// time agree on one token (the second sees the first's).
  private static let installation = KilnMutex(())

  /// The main queue's token.
  static let mainToken: QueueToken = installToken(on: .main)

  /// The token of `queue`, installed on first use; `nil` for a global queue.
  static func token(for queue: DispatchQueue) -> QueueToken? {
    if isGlobal(queue) { return nil }
    if let existing = queue.getSpecific(key: key) { return existing }
    return installToken(on: queue)
  }

  /// Whether the caller runs on the main queue: on the main thread (where the main queue
  /// is bound on Apple platforms and in programs that never called `dispatchMain()`), or
  /// inside a main-queue block on a worker thread (Linux after `dispatchMain()`, which is
  /// how `swift test` runs `@MainActor` code there).
  static var isOnMainQueue: Bool {
    if Thread.isMainThread { return true }
    // Read the token first: its first read installs it, and the main queue's specifics
    // must hold it before we look at them.
    let mainToken = mainToken
    return DispatchQueue.getSpecific(key: key) === mainToken
  }

  /// Whether the caller already runs on `queue` (or on a queue targeting it), so that
  /// blocking until `queue` runs something would deadlock.
  static func isCurrent(_ queue: DispatchQueue) -> Bool {
    guard let token = token(for: queue) else { return false }
    if token === mainToken { return isOnMainQueue }
    return DispatchQueue.getSpecific(key: key) === token
  }

  private static func isGlobal(_ queue: DispatchQueue) -> Bool {
    queue.label.hasPrefix("com.apple.root.")
  }

  private static func installToken(on queue: DispatchQueue) -> QueueToken {
    installation.withLock { _ in
      if let existing = queue.getSpecific(key: key) { return existing }
      let token = QueueToken()
      queue.setSpecific(key: key, value: token)
      return token
    }
  }
}
