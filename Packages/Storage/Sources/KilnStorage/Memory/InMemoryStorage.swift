public import Foundation

/// A single value kept in memory with the time it was saved (Bricks' `InMemoryStorage`).
///
/// ```swift
/// let storage = InMemoryStorage<[Article]>()
/// try await storage.save(articles)
/// let cached = try await storage.load()     // StorageError.empty before the first save
/// let fresh = storage.expiring(validationPolicy: .maxAge(.minutes(5)))
/// ```
///
/// Saving stamps the value with `now()`; clearing removes both. The synchronous
/// ``value`` and ``timestamp`` read the same state without suspending.
public final class InMemoryStorage<Value: Sendable>: Storage, Sendable {
  // Performance: every member on the load and save paths is `@inlinable`, over an
  // `InlinableLock`, so that a caller's module specialises them for its `Value` along with
  // the decorators around the storage. Without it, each access ran unspecialised generic
  // code in KilnStorage and looked up the metadata of `State` (`swift_getGenericMetadata`)
  // at run time: about 60 % of a cache hit through `expiring(...).fallback(...)`.
  // Library evolution is off, so this exposes no ABI promise.
  @usableFromInline
  struct State {
    @usableFromInline var value: Value?
    @usableFromInline var timestamp: Date?

    @usableFromInline
    init(value: Value?, timestamp: Date?) {
      self.value = value
      self.timestamp = timestamp
    }
  }

  @usableFromInline let state: InlinableLock<State>
  @usableFromInline let now: @Sendable () -> Date

  /// Creates a storage, empty or holding `initialValue` stamped with `now()`.
  ///
  /// - Parameters:
  ///   - initialValue: A value to start with; `nil` (the default) starts empty.
  ///   - now: The wall clock that stamps saves.
  public init(_ initialValue: Value? = nil, now: @escaping @Sendable () -> Date = Date.init) {
    self.now = now
    state = InlinableLock(State(value: initialValue, timestamp: initialValue == nil ? nil : now()))
  }

  /// When the current value was saved; `nil` when empty.
  @inlinable
  public var timestamp: Date? {
    state.withLock { $0.timestamp }
  }

  /// The current value, read without suspending; `nil` when empty.
  @inlinable
  public var value: Value? {
    state.withLock { $0.value }
  }

  /// The stored value.
  ///
  /// - Returns: The value saved last.
  /// - Throws: `StorageError/empty` when nothing is stored.
  @inlinable
  public func load() throws -> Value {
    guard let value = state.withLock({ $0.value }) else { throw StorageError.empty }
    return value
  }

  /// Replaces the value and stamps it with `now()`.
  ///
  /// - Parameter value: The value to keep.
  @inlinable
  public func save(_ value: Value) {
    let stamp = now()
    // The old value is released after the lock is dropped: its deinitialiser may be
    // user code.
    let old = state.withLock { state in
      let old = state.value
      state = State(value: value, timestamp: stamp)
      return old
    }
    withExtendedLifetime(old) {}
  }

  /// Removes the value and its timestamp.
  @inlinable
  public func clear() {
    let old = state.withLock { state in
      let old = state.value
      state = State(value: nil, timestamp: nil)
      return old
    }
    withExtendedLifetime(old) {}
  }
}
