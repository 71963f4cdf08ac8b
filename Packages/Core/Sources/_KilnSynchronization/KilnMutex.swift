// KilnMutex — `Synchronization.Mutex` with critical sections ThreadSanitizer can see.
//
// On Linux, the standard library's `Mutex` is built on futexes that ThreadSanitizer does
// not intercept, so TSan reports every pair of critical sections on different threads as
// a race (a false positive; the lock is correct). Kiln runs its whole test suite under TSan,
// so every Kiln module guards shared state with `KilnMutex` instead: the same `Mutex`,
// plus `__tsan_acquire` / `__tsan_release` on the guarded value's address when the module
// is compiled with `-DKILN_TSAN` (what `Scripts/tsan.sh` and `.ci/run` pass). Without the
// flag the annotations compile away and `KilnMutex` is exactly `Mutex`.
//
// Public, in an underscored module: Kiln's users are not meant to import it. It is public
// rather than `package` because an `@inlinable package` function is never inlined into
// another module, and every Kiln module's hot path (a memory-cache hit, joining a shared
// load) goes through `withLock`: as `package`, each call paid for unspecialized generic
// code and a metadata lookup, about 25 ns.

public import Synchronization

#if KILN_TSAN
  @usableFromInline
  @_silgen_name("__tsan_acquire")
  func __tsan_acquire(_ address: UnsafeMutableRawPointer)

  @usableFromInline
  @_silgen_name("__tsan_release")
  func __tsan_release(_ address: UnsafeMutableRawPointer)
#endif

/// A mutual-exclusion lock protecting a value: `Synchronization.Mutex`, visible to
/// ThreadSanitizer when built with `-DKILN_TSAN`.
///
/// Keep critical sections tiny: never `await`, never call user closures inside one.
@frozen
public struct KilnMutex<Value: ~Copyable>: ~Copyable, Sendable {
  @usableFromInline
  let mutex: Mutex<Value>

  /// Creates a mutex guarding `initialValue`.
  @inlinable
  public init(_ initialValue: consuming sending Value) {
    mutex = Mutex(initialValue)
  }

  /// Runs `body` with exclusive access to the guarded value.
  @inlinable
  public borrowing func withLock<Result: ~Copyable, Failure: Error>(
    _ body: (inout sending Value) throws(Failure) -> sending Result
  ) throws(Failure) -> sending Result {
    #if KILN_TSAN
      // The lock's own address: stable for the mutex's lifetime and, being a `let`, not
      // itself an instrumented access.
      let address = withUnsafePointer(to: mutex) { UnsafeMutableRawPointer(mutating: $0) }
    #endif
    return try mutex.withLock { (value: inout sending Value) throws(Failure) -> sending Result in
      #if KILN_TSAN
        __tsan_acquire(address)
        defer { __tsan_release(address) }
      #endif
      return try body(&value)
    }
  }
}
