public import Dispatch
import _KilnSynchronization

// Brisk's Swift 2-era global GCD helpers, kept so that ported code compiles (with
// deprecation warnings that name the replacement). Each is a thin wrapper over the
// DispatchQueue API or KilnDispatch's own helpers. Both spellings Brisk shipped are here:
// the positional one of its README (`dispatch_once_after(2.0, queue, "id") { }`) and the
// labelled one of its Swift 3 sources (`dispatch_once_after(2.0, operationId:onQueue:)`).
//
// "Loose" timers allow 0.1 s of leeway, as Brisk documented; "exact" ones ask for none.

private let looseLeeway = DispatchTimeInterval.milliseconds(100)
private let exactLeeway = DispatchTimeInterval.nanoseconds(0)

// MARK: - Async and sync

/// Runs `block` asynchronously on the main queue.
///
/// - Parameter block: The work, on the main actor.
@available(*, deprecated, message: "Use DispatchQueue.main.async { }")
public func dispatch_main_async(_ block: @escaping @MainActor () -> Void) {
  DispatchQueue.main.async { MainActor.assumeIsolated { block() } }
}

/// Runs `block` on the main queue and waits for it; runs it inline when already on the
/// main queue.
///
/// - Parameter block: The work, on the main actor.
@available(*, deprecated, message: "Use MainDispatchRoute(function).sync(), or f+>>.sync(arguments)")
public func dispatch_main_sync(_ block: @escaping @MainActor () -> Void) {
  MainDispatchRoute(block).sync()
}

/// Runs `block` asynchronously on the global concurrent queue.
///
/// - Parameter block: The work.
@available(*, deprecated, message: "Use DispatchQueue.global().async { }")
public func dispatch_bg_async(_ block: @escaping @Sendable () -> Void) {
  DispatchQueue.global().async(execute: block)
}

/// The serial queues of ``dispatch_async(_:block:)``, by name. Never shrinks.
private let namedQueues = KilnMutex([String: DispatchQueue]())

/// Runs `block` asynchronously on a serial queue identified by `queueName`, created on
/// first use and reused by every later call with the same name.
///
/// - Parameters:
///   - queueName: The queue's name (and label).
///   - block: The work.
/// - Important: Named queues are never released.
@available(*, deprecated, message: "Create a DispatchQueue(label:) once, keep it, and call async on it")
public func dispatch_async(_ queueName: String, block: @escaping @Sendable () -> Void) {
  let queue = namedQueues.withLock { queues in
    if let queue = queues[queueName] { return queue }
    let queue = DispatchQueue(label: queueName)
    queues[queueName] = queue
    return queue
  }
  queue.async(execute: block)
}

// MARK: - After a delay

/// Runs `block` on `queue` after `seconds`, with a loose leeway (0.1 s).
///
/// - Parameters:
///   - seconds: The delay.
///   - queue: The queue to run on.
///   - block: The work.
@available(*, deprecated, message: "Use queue.async(after:leeway:execute:)")
public func dispatch_after(_ seconds: Double, _ queue: DispatchQueue, _ block: @escaping @Sendable () -> Void) {
  queue.async(after: seconds, leeway: looseLeeway, execute: block)
}

/// Runs `block` on `queue` after `seconds`, as precisely as the system allows.
///
/// - Parameters:
///   - seconds: The delay.
///   - queue: The queue to run on.
///   - block: The work.
@available(*, deprecated, message: "Use queue.async(after:leeway:execute:) with leeway .nanoseconds(0)")
public func dispatch_after_exactly(_ seconds: Double, _ queue: DispatchQueue, _ block: @escaping @Sendable () -> Void) {
  queue.async(after: seconds, leeway: exactLeeway, execute: block)
}

/// Runs `block` on the main queue after `seconds`, with a loose leeway (0.1 s).
///
/// - Parameters:
///   - seconds: The delay.
///   - block: The work, on the main actor.
@available(*, deprecated, message: "Use DispatchQueue.main.async(after:leeway:execute:)")
public func dispatch_main_after(_ seconds: Double, _ block: @escaping @MainActor () -> Void) {
  DispatchQueue.main.async(after: seconds, leeway: looseLeeway) { MainActor.assumeIsolated { block() } }
}

/// Runs `block` on the main queue after `seconds`, as precisely as the system allows.
///
/// - Parameters:
///   - seconds: The delay.
///   - block: The work, on the main actor.
@available(*, deprecated, message: "Use DispatchQueue.main.async(after:leeway:execute:) with leeway .nanoseconds(0)")
public func dispatch_main_after_exactly(_ seconds: Double, _ block: @escaping @MainActor () -> Void) {
  DispatchQueue.main.async(after: seconds, leeway: exactLeeway) { MainActor.assumeIsolated { block() } }
}

// MARK: - Repeatedly

/// Runs `block` on `queue` every `interval` seconds, with a loose leeway (0.1 s), until the
/// timer it receives (and the function returns) is cancelled.
///
/// - Parameters:
///   - interval: Seconds between runs; the first run is one interval from now.
///   - queue: The queue to run on.
///   - block: The work; receives the timer.
/// - Returns: The timer; `cancel()` stops it.
@available(*, deprecated, message: "Use queue.async(every:leeway:execute:)")
@discardableResult
public func dispatch_every(
  _ interval: Double,
  _ queue: DispatchQueue,
  _ block: @escaping @Sendable (any DispatchSourceTimer) -> Void
) -> any DispatchSourceTimer {
  queue.async(every: interval, leeway: looseLeeway, execute: block)
}

/// Runs `block` on `queue` every `interval` seconds, as precisely as the system allows,
/// until the timer is cancelled.
///
/// - Parameters:
///   - interval: Seconds between runs; the first run is one interval from now.
///   - queue: The queue to run on.
///   - block: The work; receives the timer.
/// - Returns: The timer; `cancel()` stops it.
@available(*, deprecated, message: "Use queue.async(every:leeway:execute:) with leeway .nanoseconds(0)")
@discardableResult
public func dispatch_every_exact(
  _ interval: Double,
  _ queue: DispatchQueue,
  _ block: @escaping @Sendable (any DispatchSourceTimer) -> Void
) -> any DispatchSourceTimer {
  queue.async(every: interval, leeway: exactLeeway, execute: block)
}

/// Runs `block` on the main queue every `interval` seconds, with a loose leeway (0.1 s),
/// until the timer is cancelled.
///
/// - Parameters:
///   - interval: Seconds between runs; the first run is one interval from now.
///   - block: The work; receives the timer.
/// - Returns: The timer; `cancel()` stops it.
@available(*, deprecated, message: "Use DispatchQueue.main.async(every:leeway:execute:)")
@discardableResult
public func dispatch_main_every(
  _ interval: Double,
  _ block: @escaping @Sendable (any DispatchSourceTimer) -> Void
) -> any DispatchSourceTimer {
  DispatchQueue.main.async(every: interval, leeway: looseLeeway, execute: block)
}

/// Runs `block` on the main queue every `interval` seconds, as precisely as the system
/// allows, until the timer is cancelled.
///
/// - Parameters:
///   - interval: Seconds between runs; the first run is one interval from now.
///   - block: The work; receives the timer.
/// - Returns: The timer; `cancel()` stops it.
@available(*, deprecated, message: "Use DispatchQueue.main.async(every:leeway:execute:) with leeway .nanoseconds(0)")
@discardableResult
public func dispatch_main_every_exact(
  _ interval: Double,
  _ block: @escaping @Sendable (any DispatchSourceTimer) -> Void
) -> any DispatchSourceTimer {
  DispatchQueue.main.async(every: interval, leeway: exactLeeway, execute: block)
}

// MARK: - Once

/// Runs `block` on `queue` after `seconds`, once per burst of calls with the same
/// `operationId`: each call restarts the delay and replaces the block.
///
/// - Parameters:
///   - seconds: The delay after the last call.
///   - queue: The queue to run on.
///   - operationId: Identifies the operation.
///   - block: The work.
@available(*, deprecated, message: "Use queue.once(operationId:after:execute:)")
public func dispatch_once_after(
  _ seconds: Double,
  _ queue: DispatchQueue,
  _ operationId: String,
  _ block: @escaping @Sendable () -> Void
) {
  queue.once(operationId: operationId, after: seconds, execute: block)
}

/// Runs `block` on `queue` after `seconds`, once per burst of calls with the same
/// `operationId`: each call restarts the delay and replaces the block.
///
/// - Parameters:
///   - seconds: The delay after the last call.
///   - operationId: Identifies the operation.
///   - queue: The queue to run on.
///   - block: The work.
@available(*, deprecated, message: "Use queue.once(operationId:after:execute:)")
public func dispatch_once_after(
  _ seconds: Double,
  operationId: String,
  onQueue queue: DispatchQueue,
  block: @escaping @Sendable () -> Void
) {
  queue.once(operationId: operationId, after: seconds, execute: block)
}

/// Runs `block` on the main queue after `seconds`, once per burst of calls with the same
/// `operationId`.
///
/// - Parameters:
///   - seconds: The delay after the last call.
///   - operationId: Identifies the operation.
///   - block: The work, on the main actor.
@available(*, deprecated, message: "Use DispatchQueue.main.once(operationId:after:execute:)")
public func dispatch_main_once_after(
  _ seconds: Double,
  _ operationId: String,
  _ block: @escaping @MainActor () -> Void
) {
  DispatchQueue.main.once(operationId: operationId, after: seconds) { MainActor.assumeIsolated { block() } }
}

/// Runs `block` on the main queue after `seconds`, once per burst of calls with the same
/// `operationId`.
///
/// - Parameters:
///   - seconds: The delay after the last call.
///   - operationId: Identifies the operation.
///   - block: The work, on the main actor.
@available(*, deprecated, message: "Use DispatchQueue.main.once(operationId:after:execute:)")
public func dispatch_main_once_after(
  _ seconds: Double,
  operationId: String,
  block: @escaping @MainActor () -> Void
) {
  DispatchQueue.main.once(operationId: operationId, after: seconds) { MainActor.assumeIsolated { block() } }
}

// MARK: - Each

/// Calls `block` with every element of `elements`, in parallel, and returns when all calls
/// have returned.
///
/// - Parameters:
///   - elements: The elements.
///   - queue: Ignored, as it was in Brisk: the calls run on GCD's concurrent pool.
///   - block: The work for one element; runs concurrently with the others.
@available(*, deprecated, message: "Use DispatchQueue.concurrentPerform(iterations:execute:)")
public func dispatch_each<Element: Sendable>(
  _ elements: [Element],
  _ queue: DispatchQueue,
  _ block: @Sendable (Element) -> Void
) {
  DispatchQueue.concurrentPerform(iterations: elements.count) { index in block(elements[index]) }
}

/// Calls `block` with every element of `elements`, in parallel, and returns when all calls
/// have returned.
///
/// - Parameters:
///   - elements: The elements.
///   - queue: Ignored, as it was in Brisk: the calls run on GCD's concurrent pool.
///   - block: The work for one element; runs concurrently with the others.
@available(*, deprecated, message: "Use DispatchQueue.concurrentPerform(iterations:execute:)")
public func dispatch_each<Element: Sendable>(
  _ elements: [Element],
  queue: DispatchQueue,
  block: @Sendable (Element) -> Void
) {
  DispatchQueue.concurrentPerform(iterations: elements.count) { index in block(elements[index]) }
}
