public import Dispatch

/// A function bound to the queue it will run on: what postfix `~>>` (and `+>>` on a
/// `@Sendable` function) makes.
///
/// Pick the queue with ``on(_:)``, ``main`` or ``background``, then call the function with
/// ``async(_:)`` (returns at once) or ``sync(_:)`` (returns its value):
///
/// ```swift
/// resize~>>.on(imageQueue).async(image, size)          // runs later on imageQueue
/// let total = sum~>>.background.sync(1, 2, 3)          // waits for the value
/// resize~>>.async(image, size) +>> { thumbnail in show(thumbnail) }
/// ```
///
/// A route is a value: choosing a queue returns a new route, and one route may be called
/// any number of times.
public struct DispatchRoute<each Argument: Sendable, Output: Sendable>: Sendable {
  let function: @Sendable (repeat each Argument) -> Output

  /// The queue the function runs on.
  public let queue: DispatchQueue

  /// Binds `function` to `queue`.
  ///
  /// - Parameters:
  ///   - function: The function to call.
  ///   - queue: The queue to call it on; the global concurrent queue by default.
  public init(_ function: @escaping @Sendable (repeat each Argument) -> Output, queue: DispatchQueue = .global()) {
    self.function = function
    self.queue = queue
  }

  /// The same function on `queue`.
  ///
  /// - Parameter queue: The queue to run the function on.
  /// - Returns: A route to `queue`.
  public func on(_ queue: DispatchQueue) -> DispatchRoute {
    DispatchRoute(function, queue: queue)
  }

  /// The same function on the main queue.
  public var main: DispatchRoute {
    on(.main)
  }

  /// The same function on the global concurrent queue.
  public var background: DispatchRoute {
    on(.global())
  }

  /// Calls the function with `arguments` asynchronously on ``queue``.
  ///
  /// - Parameter arguments: The function's arguments.
  /// - Returns: The pending call; route its value to a handler with `+>>` or `~>>`, or
  ///   discard it.
  @discardableResult
  public func async(_ arguments: repeat each Argument) -> DispatchedCall<Output> {
    let pending = PendingResult<Output>()
    let function = function
    let arguments = (repeat each arguments)
    queue.async { pending.fulfill(function(repeat each arguments)) }
    return DispatchedCall(pending: pending)
  }

  /// Calls the function with `arguments` on ``queue`` and waits for its value.
  ///
  /// When the caller already runs on ``queue`` (or on a queue that targets it, or on the
  /// main thread for the main queue), the function runs inline instead of deadlocking.
  ///
  /// - Parameter arguments: The function's arguments.
  /// - Returns: The function's return value.
  /// - Important: Blocks the calling thread until the function has run.
  public func sync(_ arguments: repeat each Argument) -> Output {
    if QueueIdentity.isCurrent(queue) { return function(repeat each arguments) }
    return queue.sync { function(repeat each arguments) }
  }
}
