// The operators of KilnDispatch and how they group.
//
// Async → sync (prefix):   <<-  <<+  <<~        and   <<~queue ~~~ { }
// Sync → async (infix):    +>>  ~>>  ?+>>  ?~>>
// Sync → async (postfix):  f+>>  f~>>           then .on(_:), .main, .background, .async, .sync

/// Blocks until the callback of the operation that follows is called; runs the operation on
/// the current thread.
prefix operator <<-

/// Blocks until the callback of the operation that follows is called; runs the operation on
/// the main queue.
prefix operator <<+

/// Blocks until the callback of the operation that follows is called; runs the operation on
/// the global concurrent queue, or — as `<<~queue ~~~ { }` — on `queue`.
prefix operator <<~

/// The precedence of `~~~` in `<<~queue ~~~ { operation($0) }`: below every operator that
/// could appear in the operands, above assignment, so `let value = <<~queue ~~~ { }` reads
/// as written.
precedencegroup KilnQueueRedirectionPrecedence {
  higherThan: AssignmentPrecedence
  lowerThan: TernaryPrecedence
}

/// Joins a queue to the operation run on it: `<<~queue ~~~ { operation($0) }`.
infix operator ~~~ : KilnQueueRedirectionPrecedence

/// The precedence of the routing operators `+>>`, `~>>`, `?+>>` and `?~>>`.
///
/// Left-associative, so a chain reads left to right —
/// `f ~>> queue ~>> (1, 2) ~>> otherQueue ~>> { result in }` is
/// `((((f ~>> queue) ~>> (1, 2)) ~>> otherQueue) ~>> { result in })` — and lower than every
/// standard operator except the ternary conditional and assignment, so the arguments on
/// the right may be any expression: `f ~>> x + 1`, `f ~>> value ?? fallback` and
/// `f ~>> a == b` pass `x + 1`, `value ?? fallback` and `a == b`.
precedencegroup KilnAsyncRedirectPrecedence {
  associativity: left
  higherThan: AssignmentPrecedence
  lowerThan: TernaryPrecedence
}

/// Runs a function on the main queue: `f +>> (arguments)`; routes a result to a handler on
/// the main queue: `… +>> { result in }`.
infix operator +>> : KilnAsyncRedirectPrecedence

/// Runs a function on the global concurrent queue, or on the queue it names:
/// `f ~>> (arguments)`, `f ~>> queue ~>> (arguments)`; routes a result to a handler:
/// `… ~>> { result in }`, `… ~>> queue ~>> { result in }`.
infix operator ~>> : KilnAsyncRedirectPrecedence

/// `+>>` for an optional function: does nothing when the function is `nil`.
infix operator ?+>> : KilnAsyncRedirectPrecedence

/// `~>>` for an optional function: does nothing when the function is `nil`.
infix operator ?~>> : KilnAsyncRedirectPrecedence

/// Makes a ``MainDispatchRoute`` (or a ``DispatchRoute`` on the main queue) from a function:
/// `f+>>.async(arguments)`.
postfix operator +>>

/// Makes a ``DispatchRoute`` on the global concurrent queue from a function:
/// `f~>>.on(queue).async(arguments)`.
postfix operator ~>>
