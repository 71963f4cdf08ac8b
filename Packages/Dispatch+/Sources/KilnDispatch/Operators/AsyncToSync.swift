public import Dispatch

// MARK: - <<-

/// Calls an asynchronous function on the current thread and blocks until it calls its
/// completion handler, then returns the handler's arguments.
///
/// Pass the handler `$0` where the function expects its completion; the arguments come back
/// as a single value, a tuple, or `()` — whatever the handler receives:
///
/// ```swift
/// let valid = <<-{ verifyUser("name", password: "secret", completion: $0) }     // Bool
/// let (album, error) = <<-{ getAlbum(named: "pics", handler: $0) }              // a tuple
/// <<-{ saveUser(completionHandler: $0) }                                        // ()
/// ```
///
/// Swift infers the handler's shape from the function it is passed to. When the closure
/// has several statements, spell out the result type
/// (`let valid: Bool = <<-{ done in …; verifyUser(name, completion: done) }`); when it calls
/// the handler itself, annotate the handler
/// (`<<-{ (done: @escaping @Sendable (Int) -> Void) in done(42) }`).
///
/// - Parameter operation: Starts the asynchronous work and passes it the completion handler.
///   It runs at once, on the calling thread. If it throws, the error is rethrown and
///   nothing waits.
/// - Returns: The arguments of the first call to the handler.
/// - Important: The calling thread waits until the handler is called — forever if it never
///   is. ``waitForCallback(timeout:_:)`` is the same with a time limit. The first call of the
///   handler wins: later calls are ignored, never a crash. On the main thread the wait keeps
///   the run loop turning, so a handler delivered on the main queue arrives — except from
///   inside a block the main queue is already running (any `@MainActor` task, for one):
///   GCD never runs the main queue re-entrantly, so there a handler delivered through the
///   main queue cannot arrive. Use ``withCallback(isolation:_:)`` from async code.
/// - Warning: This blocks a thread. Block a serial queue of your own, never the global queue
///   (on Linux a blocked global-queue thread delays all other GCD work by about a second while
///   the pool grows) and never a Swift concurrency task (its pool does not grow at all); from
///   async code use ``withCallback(isolation:_:)``, which suspends instead.
@discardableResult
public prefix func <<- <each Value: Sendable>(
  _ operation: (_ callback: @escaping @Sendable (repeat each Value) -> Void) throws -> Void
) rethrows -> (repeat each Value) {
  let rendezvous = CallbackRendezvous<repeat each Value>()
  try operation(rendezvous.callback)
  return rendezvous.wait()
}

// MARK: - <<+

/// Calls an asynchronous function on the main queue and blocks until it calls its
/// completion handler, then returns the handler's arguments.
///
/// ```swift
/// myQueue.async {
///   let (pokemon, error) = <<+{ findClosestPokemon(within: 10, completionHandler: $0) }
///   …
/// }
/// ```
///
/// The operation is main-actor isolated, so it may call UI code directly. Called from the
/// main queue, it runs at once instead of being queued behind the waiting caller.
///
/// - Parameter operation: Starts the asynchronous work on the main queue and passes it the
///   completion handler.
/// - Returns: The arguments of the first call to the handler.
/// - Important: Blocks the calling thread until the handler is called, as `<<-` does (and
///   with the same rules: first call wins; on the main thread the run loop keeps turning).
/// - Warning: This blocks a thread. Block a serial queue of your own, never the global queue
///   (on Linux a blocked global-queue thread delays all other GCD work by about a second while
///   the pool grows) and never a Swift concurrency task (its pool does not grow at all); from
///   async code use ``withCallback(isolation:_:)``, which suspends instead.
@discardableResult
public prefix func <<+ <each Value: Sendable>(
  _ operation: @escaping @MainActor (_ callback: @escaping @Sendable (repeat each Value) -> Void) -> Void
) -> (repeat each Value) {
  let rendezvous = CallbackRendezvous<repeat each Value>()
  runOnMainQueue { operation(rendezvous.callback) }
  return rendezvous.wait()
}

// MARK: - <<~

/// Calls an asynchronous function on the global concurrent queue and blocks until it calls
/// its completion handler, then returns the handler's arguments.
///
/// ```swift
/// let success = <<~{ saveUser(completionHandler: $0) }
/// ```
///
/// - Parameter operation: Starts the asynchronous work and passes it the completion
///   handler; runs on `DispatchQueue.global()`.
/// - Returns: The arguments of the first call to the handler.
/// - Important: Blocks the calling thread until the handler is called, as `<<-` does.
/// - Warning: This blocks a thread. Block a serial queue of your own, never the global queue
///   (on Linux a blocked global-queue thread delays all other GCD work by about a second while
///   the pool grows) and never a Swift concurrency task (its pool does not grow at all); from
///   async code use ``withCallback(isolation:_:)``, which suspends instead.
@discardableResult
public prefix func <<~ <each Value: Sendable>(
  _ operation: @escaping @Sendable (_ callback: @escaping @Sendable (repeat each Value) -> Void) -> Void
) -> (repeat each Value) {
  DispatchQueue.global() ~~~ operation
}

/// Calls an asynchronous function whose completion handler takes one argument on the
/// global concurrent queue, and blocks until it calls the handler, then returns the
/// argument.
///
/// ```swift
/// let saved: Bool = <<~{ saveUser(completionHandler: $0) }
/// ```
///
/// The one-argument case of `<<~`, spelled out because Swift 6.3 fails to match a
/// one-element parameter pack to a contextual type ("cannot convert Int to Int") when
/// `<<~` is also overloaded for queues. It behaves exactly like the general form.
///
/// - Parameter operation: Starts the asynchronous work and passes it the completion
///   handler; runs on `DispatchQueue.global()`.
/// - Returns: The argument of the first call to the handler.
/// - Important: Blocks the calling thread until the handler is called, as `<<-` does.
/// - Warning: This blocks a thread. Block a serial queue of your own, never the global queue
///   (on Linux a blocked global-queue thread delays all other GCD work by about a second while
///   the pool grows) and never a Swift concurrency task (its pool does not grow at all); from
///   async code use ``withCallback(isolation:_:)``, which suspends instead.
@discardableResult
public prefix func <<~ <Value: Sendable>(
  _ operation: @escaping @Sendable (_ callback: @escaping @Sendable (Value) -> Void) -> Void
) -> Value {
  DispatchQueue.global() ~~~ operation
}

/// Names the queue of `<<~queue ~~~ { operation($0) }`; returns `queue` unchanged.
///
/// - Parameter queue: The queue the operation after `~~~` runs on.
/// - Returns: `queue`.
public prefix func <<~ (queue: DispatchQueue) -> DispatchQueue {
  queue
}

/// Calls an asynchronous function on `queue` and blocks until it calls its completion
/// handler, then returns the handler's arguments.
///
/// ```swift
/// let valid = <<~myQueue ~~~ { saveUser(completionHandler: $0) }
/// ```
///
/// Called from `queue` itself (or from a queue that targets it), the operation runs at
/// once instead of being queued behind the waiting caller, which would deadlock a serial
/// queue.
///
/// - Parameters:
///   - queue: The queue to start the operation on.
///   - operation: Starts the asynchronous work and passes it the completion handler.
/// - Returns: The arguments of the first call to the handler.
/// - Important: Blocks the calling thread until the handler is called, as `<<-` does. A
///   handler that the callee delivers asynchronously on the serial queue the caller is
///   blocking can never run: deliver it elsewhere.
/// - Warning: This blocks a thread. Block a serial queue of your own, never the global queue
///   (on Linux a blocked global-queue thread delays all other GCD work by about a second while
///   the pool grows) and never a Swift concurrency task (its pool does not grow at all); from
///   async code use ``withCallback(isolation:_:)``, which suspends instead.
@discardableResult
public func ~~~ <each Value: Sendable>(
  queue: DispatchQueue,
  operation: @escaping @Sendable (_ callback: @escaping @Sendable (repeat each Value) -> Void) -> Void
) -> (repeat each Value) {
  let rendezvous = CallbackRendezvous<repeat each Value>()
  run(on: queue) { operation(rendezvous.callback) }
  return rendezvous.wait()
}

// MARK: - Starting the operation

/// Runs `work` on `queue`: at once when the caller already runs there, else asynchronously.
func run(on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) {
  if QueueIdentity.isCurrent(queue) {
    work()
  } else {
    queue.async(execute: work)
  }
}

/// Runs `work` on the main queue: at once when the caller already runs there, else
/// asynchronously.
func runOnMainQueue(_ work: @escaping @MainActor () -> Void) {
  if QueueIdentity.isOnMainQueue {
    MainActor.assumeIsolated { work() }
  } else {
    DispatchQueue.main.async { MainActor.assumeIsolated { work() } }
  }
}
