public import Dispatch

// Sync → async: call a function on another queue in one expression, function first.
//
//   f +>> (arguments)                      f on the main queue
//   f ~>> (arguments)                      f on the global concurrent queue
//   f ~>> queue ~>> (arguments)            f on `queue`
//   … +>> { value in }                     the return value, on the main queue
//   … ~>> { value in }                     the return value, on the global queue
//   … ~>> queue ~>> { value in }           the return value, on `queue`
//   optional ?+>> (arguments)              nothing when `optional` is nil
//
// The arguments are a value, a tuple for several parameters (labels optional), or `()`.
// Every call returns at once; the function runs later, exactly once.

// MARK: - +>> : on the main queue

/// Calls `function` with `arguments` asynchronously on the main queue.
///
/// ```swift
/// completionHandler +>> (success: true, error: nil)
/// reload +>> ()
/// format +>> (price) +>> { text in label.text = text }
/// ```
///
/// The function may be `@MainActor` (UI code) or any `@Sendable` function.
///
/// - Parameters:
///   - function: The function to call on the main queue.
///   - arguments: Its arguments: a value, a tuple, or `()`.
/// - Returns: The pending call, for routing the return value to a handler.
@discardableResult
public func +>> <each Argument: Sendable, Output: Sendable>(
  function: @escaping @MainActor (repeat each Argument) -> Output,
  arguments: (repeat each Argument)
) -> DispatchedCall<Output> {
  MainDispatchRoute(function).async(repeat each arguments)
}

/// Calls `function` with `arguments` asynchronously on the main queue.
///
/// The form for functions that return nothing, so that
/// `return completionHandler +>> (false, error)` works in a function returning `Void`.
///
/// - Parameters:
///   - function: The function to call on the main queue.
///   - arguments: Its arguments: a value, a tuple, or `()`.
public func +>> <each Argument: Sendable>(
  function: @escaping @MainActor (repeat each Argument) -> Void,
  arguments: (repeat each Argument)
) {
  MainDispatchRoute(function).async(repeat each arguments)
}

/// Runs `handler` on the main actor with the return value of a dispatched call.
///
/// ```swift
/// checksum ~>> (file) +>> { sum in label.text = sum }
/// ```
///
/// - Parameters:
///   - call: The call whose return value to route.
///   - handler: Receives the value on the main queue.
public func +>> <Output: Sendable>(call: DispatchedCall<Output>, handler: @escaping @MainActor (Output) -> Void) {
  call.onMainActor(handler)
}

/// Runs `handler` on the main actor with the return value of a dispatched call, if there
/// is a call: the end of `optionalFunction ?+>> (arguments) +>> { value in }`.
///
/// - Parameters:
///   - call: The call whose return value to route; nothing happens when `nil`.
///   - handler: Receives the value on the main queue.
public func +>> <Output: Sendable>(call: DispatchedCall<Output>?, handler: @escaping @MainActor (Output) -> Void) {
  call?.onMainActor(handler)
}

// MARK: - ~>> : on the global queue or a named one

/// Calls `function` with `arguments` asynchronously on the global concurrent queue.
///
/// ```swift
/// compress ~>> (data, .best)
/// compress ~>> (data, .best) ~>> uploads ~>> { archive in upload(archive) }
/// ```
///
/// - Parameters:
///   - function: The function to call.
///   - arguments: Its arguments: a value, a tuple, or `()`.
/// - Returns: The pending call, for routing the return value to a handler.
/// - Important: For a function whose only parameter is a `DispatchQueue`, `f ~>> queue`
///   names the queue to run on (as in Brisk); call it with `f~>>.async(queue)`.
@discardableResult
@_disfavoredOverload
public func ~>> <each Argument: Sendable, Output: Sendable>(
  function: @escaping @Sendable (repeat each Argument) -> Output,
  arguments: (repeat each Argument)
) -> DispatchedCall<Output> {
  DispatchRoute(function).async(repeat each arguments)
}

/// Calls `function` with `arguments` asynchronously on the global concurrent queue.
///
/// The form for functions that return nothing, so that `return f ~>> (arguments)` works in
/// a function returning `Void`.
///
/// - Parameters:
///   - function: The function to call.
///   - arguments: Its arguments: a value, a tuple, or `()`.
@_disfavoredOverload
public func ~>> <each Argument: Sendable>(
  function: @escaping @Sendable (repeat each Argument) -> Void,
  arguments: (repeat each Argument)
) {
  DispatchRoute(function).async(repeat each arguments)
}

/// Binds `function` to `queue`: the start of `f ~>> queue ~>> (arguments)`.
///
/// - Parameters:
///   - function: The function to call.
///   - queue: The queue to call it on.
/// - Returns: A route; `~>> (arguments)` calls the function.
public func ~>> <each Argument: Sendable, Output: Sendable>(
  function: @escaping @Sendable (repeat each Argument) -> Output,
  queue: DispatchQueue
) -> DispatchRoute<repeat each Argument, Output> {
  DispatchRoute(function, queue: queue)
}

/// Calls a routed function with `arguments` asynchronously on its queue: the end of
/// `f ~>> queue ~>> (arguments)`, and the same as `route.async(arguments)`.
///
/// - Parameters:
///   - route: The function and its queue.
///   - arguments: Its arguments: a value, a tuple, or `()`.
/// - Returns: The pending call, for routing the return value to a handler.
@discardableResult
public func ~>> <each Argument: Sendable, Output: Sendable>(
  route: DispatchRoute<repeat each Argument, Output>,
  arguments: (repeat each Argument)
) -> DispatchedCall<Output> {
  route.async(repeat each arguments)
}

/// Calls a routed function that returns nothing with `arguments` asynchronously on its
/// queue, so that `return f ~>> queue ~>> (arguments)` works in a function returning `Void`.
///
/// - Parameters:
///   - route: The function and its queue.
///   - arguments: Its arguments: a value, a tuple, or `()`.
public func ~>> <each Argument: Sendable>(
  route: DispatchRoute<repeat each Argument, Void>,
  arguments: (repeat each Argument)
) {
  route.async(repeat each arguments)
}

/// Calls a routed function with `arguments` if there is a route: the end of
/// `optionalFunction ?~>> queue ~>> (arguments)`.
///
/// - Parameters:
///   - route: The function and its queue; nothing happens when `nil`.
///   - arguments: Its arguments: a value, a tuple, or `()`.
/// - Returns: The pending call, or `nil` when there was no route.
@discardableResult
public func ~>> <each Argument: Sendable, Output: Sendable>(
  route: DispatchRoute<repeat each Argument, Output>?,
  arguments: (repeat each Argument)
) -> DispatchedCall<Output>? {
  switch route {
  case .some(let route): route.async(repeat each arguments)
  case .none: nil
  }
}

/// Routes the handlers of a dispatched call to `queue`: the middle of
/// `f ~>> (arguments) ~>> queue ~>> { value in }`.
///
/// - Parameters:
///   - call: The call whose return value to route.
///   - queue: The queue for the handler that follows.
/// - Returns: The call, delivering on `queue`.
public func ~>> <Output: Sendable>(call: DispatchedCall<Output>, queue: DispatchQueue) -> DispatchedCall<Output> {
  call.delivering(on: queue)
}

/// Routes the handlers of a dispatched call, if there is one, to `queue`.
///
/// - Parameters:
///   - call: The call whose return value to route; `nil` stays `nil`.
///   - queue: The queue for the handler that follows.
/// - Returns: The call, delivering on `queue`, or `nil`.
public func ~>> <Output: Sendable>(call: DispatchedCall<Output>?, queue: DispatchQueue) -> DispatchedCall<Output>? {
  call?.delivering(on: queue)
}

/// Runs `handler` with the return value of a dispatched call, on the queue routed with
/// `~>> queue` or else on the global concurrent queue.
///
/// ```swift
/// parse ~>> (data) ~>> { document in index(document) }
/// parse ~>> (data) ~>> indexQueue ~>> { document in index(document) }
/// ```
///
/// - Parameters:
///   - call: The call whose return value to route.
///   - handler: Receives the value.
public func ~>> <Output: Sendable>(call: DispatchedCall<Output>, handler: @escaping @Sendable (Output) -> Void) {
  call.onResult(handler)
}

/// Runs `handler` with the return value of a dispatched call, if there is one.
///
/// - Parameters:
///   - call: The call whose return value to route; nothing happens when `nil`.
///   - handler: Receives the value.
public func ~>> <Output: Sendable>(call: DispatchedCall<Output>?, handler: @escaping @Sendable (Output) -> Void) {
  call?.onResult(handler)
}

// MARK: - ?+>> and ?~>> : optional functions

/// Calls an optional function with `arguments` asynchronously on the main queue; does
/// nothing when it is `nil`.
///
/// ```swift
/// func load(completion: (@Sendable (Int) -> Void)? = nil) {
///   completion ?+>> (42)
/// }
/// ```
///
/// Only the first operator of a chain needs the `?`:
/// `completion ?+>> (value) +>> { result in }`.
///
/// - Parameters:
///   - function: The function to call, or `nil`.
///   - arguments: Its arguments: a value, a tuple, or `()`.
/// - Returns: The pending call, or `nil` when there was no function.
@discardableResult
public func ?+>> <each Argument: Sendable, Output: Sendable>(
  function: (@MainActor (repeat each Argument) -> Output)?,
  arguments: (repeat each Argument)
) -> DispatchedCall<Output>? {
  switch function {
  case .some(let function): MainDispatchRoute(function).async(repeat each arguments)
  case .none: nil
  }
}

/// Calls an optional function that returns nothing with `arguments` asynchronously on the
/// main queue; does nothing when it is `nil`.
///
/// - Parameters:
///   - function: The function to call, or `nil`.
///   - arguments: Its arguments: a value, a tuple, or `()`.
public func ?+>> <each Argument: Sendable>(
  function: (@MainActor (repeat each Argument) -> Void)?,
  arguments: (repeat each Argument)
) {
  switch function {
  case .some(let function): MainDispatchRoute(function).async(repeat each arguments)
  case .none: break
  }
}

/// Calls an optional function with `arguments` asynchronously on the global concurrent
/// queue; does nothing when it is `nil`.
///
/// - Parameters:
///   - function: The function to call, or `nil`.
///   - arguments: Its arguments: a value, a tuple, or `()`.
/// - Returns: The pending call, or `nil` when there was no function.
@discardableResult
@_disfavoredOverload
public func ?~>> <each Argument: Sendable, Output: Sendable>(
  function: (@Sendable (repeat each Argument) -> Output)?,
  arguments: (repeat each Argument)
) -> DispatchedCall<Output>? {
  switch function {
  case .some(let function): DispatchRoute(function).async(repeat each arguments)
  case .none: nil
  }
}

/// Calls an optional function that returns nothing with `arguments` asynchronously on the
/// global concurrent queue; does nothing when it is `nil`.
///
/// - Parameters:
///   - function: The function to call, or `nil`.
///   - arguments: Its arguments: a value, a tuple, or `()`.
@_disfavoredOverload
public func ?~>> <each Argument: Sendable>(
  function: (@Sendable (repeat each Argument) -> Void)?,
  arguments: (repeat each Argument)
) {
  switch function {
  case .some(let function): DispatchRoute(function).async(repeat each arguments)
  case .none: break
  }
}

/// Binds an optional function to `queue`: the start of
/// `optionalFunction ?~>> queue ~>> (arguments)`.
///
/// - Parameters:
///   - function: The function to call, or `nil`.
///   - queue: The queue to call it on.
/// - Returns: A route, or `nil` when there was no function.
public func ?~>> <each Argument: Sendable, Output: Sendable>(
  function: (@Sendable (repeat each Argument) -> Output)?,
  queue: DispatchQueue
) -> DispatchRoute<repeat each Argument, Output>? {
  switch function {
  case .some(let function): DispatchRoute(function, queue: queue)
  case .none: nil
  }
}

// MARK: - Postfix

/// Makes a route for `function` on the global concurrent queue:
/// `f~>>.async(arguments)`, `f~>>.on(queue).async(arguments)`, `f~>>.main.sync(arguments)`.
///
/// For an optional function, optional chaining does the work: `f?~>>.async(arguments)`.
///
/// - Parameter function: The function to route.
/// - Returns: A route on `DispatchQueue.global()`.
public postfix func ~>> <each Argument: Sendable, Output: Sendable>(
  function: @escaping @Sendable (repeat each Argument) -> Output
) -> DispatchRoute<repeat each Argument, Output> {
  DispatchRoute(function)
}

/// Makes a route for `function` on the main queue: `f+>>.async(arguments)`.
///
/// - Parameter function: The function to route.
/// - Returns: A route on `DispatchQueue.main`; ``DispatchRoute/on(_:)`` can still move it.
public postfix func +>> <each Argument: Sendable, Output: Sendable>(
  function: @escaping @Sendable (repeat each Argument) -> Output
) -> DispatchRoute<repeat each Argument, Output> {
  DispatchRoute(function, queue: .main)
}

/// Makes a route for a main-actor function on the main queue:
/// `f+>>.async(arguments)`, `f+>>.sync(arguments)`.
///
/// - Parameter function: The main-actor function to route.
/// - Returns: A route on the main queue.
public postfix func +>> <each Argument: Sendable, Output: Sendable>(
  function: @escaping @MainActor (repeat each Argument) -> Output
) -> MainDispatchRoute<repeat each Argument, Output> {
  MainDispatchRoute(function)
}
