import Dispatch
import Foundation
import _KilnSynchronization

/// An object whose only job is to be identical to itself: the mark KilnDispatch leaves in a
/// queue's specifics so that it can later tell whether code is running on that queue.
final class QueueToken: Sendable {
  /// The key this token is stored under in its own queue, and in no other queue.
  ///
  /// `DispatchQueue.getSpecific(key:)` returns the value of the first queue up the target
  /// chain that has one *for the key it is given*. With one key per queue, an inner queue's
  /// own token never hides the token of a queue it targets.
  let key = DispatchSpecificKey<QueueToken>()
}

/// Answers "am I already running on this queue?", the question behind every re-entrancy
/// guard in KilnDispatch (`.sync` run inline, `<<+` from the main queue, `synchronized`).
///
/// GCD has no public "current queue" query, so KilnDispatch stores a ``QueueToken`` in each
/// queue it is asked about, under the token's own `DispatchSpecificKey` (private, invisible
/// to the queue's owner), and compares it with `DispatchQueue.getSpecific(key:)`, which reads
/// the specifics of the queue running the current block — or, when that queue has no value
/// for the key, of its target queues, up the chain. Because no other queue has a value for
/// `q`'s key, code running on a queue that targets a serial queue `q` is, correctly, "on `q`"
/// (a `q.sync` from there would deadlock), also when that inner queue has a token of its own.
///
/// A second, shared key maps each queue to its own token (read with the queue's
/// `getSpecific(key:)`, which looks at that queue only), so a queue gets one token for life.
///
/// Global (root) queues refuse specifics — libdispatch crashes the process — and never need
/// the guard (a concurrent queue cannot deadlock on itself), so they are recognised by their
/// `com.apple.root.` label and reported as "not current".
enum QueueIdentity {
  /// The registry: each queue's own token, read with `queue.getSpecific(key:)` (that queue
  /// only, never its targets). Never used to ask which queue is current — the token's own
  /// ``QueueToken/key`` is.
  private static let registry = DispatchSpecificKey<QueueToken>()

  /// Serialises token installation, so two threads asking about a new queue at the same
  /// time agree on one token (the second sees the first's).
  private static let installation = KilnMutex(())

  /// The main queue's token.
  static let mainToken: QueueToken = installToken(on: .main)

  /// The token of `queue`, installed on first use; `nil` for a global queue.
  static func token(for queue: DispatchQueue) -> QueueToken? {
    if isGlobal(queue) { return nil }
    if let existing = queue.getSpecific(key: registry) { return existing }
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
    return DispatchQueue.getSpecific(key: mainToken.key) === mainToken
  }

  /// Whether the caller already runs on `queue` (or on a queue targeting it), so that
  /// blocking until `queue` runs something would deadlock.
  static func isCurrent(_ queue: DispatchQueue) -> Bool {
    guard let token = token(for: queue) else { return false }
    if token === mainToken { return isOnMainQueue }
    return DispatchQueue.getSpecific(key: token.key) === token
  }

  private static func isGlobal(_ queue: DispatchQueue) -> Bool {
    queue.label.hasPrefix("com.apple.root.")
  }

  private static func installToken(on queue: DispatchQueue) -> QueueToken {
    installation.withLock { _ in
      if let existing = queue.getSpecific(key: registry) { return existing }
      let token = QueueToken()
      // The token's own key first: once the registry names the token, `isCurrent` may look
      // for it from another thread.
      queue.setSpecific(key: token.key, value: token)
      queue.setSpecific(key: registry, value: token)
      return token
    }
  }
}
