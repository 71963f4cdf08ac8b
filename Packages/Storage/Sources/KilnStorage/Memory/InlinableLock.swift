// Public: the inlinable lock below is specialised in the caller's module.
public import _KilnSynchronization

/// State guarded by a ``KilnMutex`` whose critical sections can be inlined (and so
/// specialised) into the caller's module.
///
/// The lock is a `KilnMutex` (its ThreadSanitizer annotations included) and everything,
/// the lock and the work done under it, is inlinable: a `MemoryCache<Int, Int>` hit costs
/// a dictionary lookup and a few array writes in the caller's own specialised code, instead
/// of generic code through witness tables.
///
/// The guarded state lives in a heap cell reached through a pointer, so that accessing it
/// needs no dynamic exclusivity check.
@usableFromInline
final class InlinableLock<State>: @unchecked Sendable {
  // Why `@unchecked Sendable` is sound: `cell` is read and written only inside `run(_:)`,
  // that is, while `mutex` is held (``withLock(_:)`` is the only caller, and the
  // initialiser and deinitialiser run before and after any sharing). KilnMutex provides
  // mutual exclusion and the happens-before edges between critical sections, and reports
  // them to ThreadSanitizer under -DKILN_TSAN. The state itself never leaves the lock
  // except as copies returned by the critical section.
  @usableFromInline
  let cell: UnsafeMutablePointer<State>
  @usableFromInline
  let mutex = KilnMutex(())

  @usableFromInline
  init(_ state: State) {
    cell = .allocate(capacity: 1)
    cell.initialize(to: state)
  }

  deinit {
    cell.deinitialize(count: 1)
    cell.deallocate()
  }

  /// Runs `body` with the lock held.
  @inlinable
  func run(_ body: () -> Void) {
    mutex.withLock { (_: inout sending Void) throws(Never) -> sending Void in body() }
  }

  /// Runs `body` with exclusive access to the state.
  ///
  /// Never `await`, call user code, or release values whose deinitialisers might run user
  /// code inside `body`: return them instead.
  @inlinable
  func withLock<Result>(_ body: (inout State) -> Result) -> Result {
    // The result goes through uninitialised stack memory rather than an Optional, whose
    // enum-tag handling of a large `Result` costs more than the critical section.
    withUnsafeTemporaryAllocation(of: Result.self, capacity: 1) { result in
      run { result.initializeElement(at: 0, to: body(&cell.pointee)) }
      return result.moveElement(from: 0)
    }
  }
}
