public import Foundation
import _KilnSynchronization

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
  private struct State {
    var value: Value?
    var timestamp: Date?
  }

  private let state: KilnMutex<State>
  private let now: @Sendable () -> Date

  /// Creates a storage, empty or holding `initialValue` stamped with `now()`.
  ///
  /// - Parameters:
  ///   - initialValue: A value to start with; `nil` (the default) starts empty.
  ///   - now: The wall clock that stamps saves.
  public init(_ initialValue: Value? = nil, now: @escaping @Sendable () -> Date = Date.init) {
    self.now = now
    state = KilnMutex(State(value: initialValue, timestamp: initialValue == nil ? nil : now()))
  }

  /// When the current value was saved; `nil` when empty.
  public var timestamp: Date? {
    state.withLock { $0.timestamp }
  }

  /// The current value, read without suspending; `nil` when empty.
  public var value: Value? {
    state.withLock { $0.value }
  }

  /// The stored value.
  ///
  /// - Returns: The value saved last.
  /// - Throws: `StorageError/empty` when nothing is stored.
  public func load() throws -> Value {
    guard let value = state.withLock({ $0.value }) else { throw StorageError.empty }
    return value
  }

  /// Replaces the value and stamps it with `now()`.
  ///
  /// - Parameter value: The value to keep.
  public func save(_ value: Value) {
    let stamp = now()
    let old = state.withLock { state in
      let old = state.value
      state = State(value: value, timestamp: stamp)
      return old
    }
    withExtendedLifetime(old) {}
  }

  /// Removes the value and its timestamp.
  public func clear() {
    let old = state.withLock { state in
      let old = state.value
      state = State(value: nil, timestamp: nil)
      return old
    }
    withExtendedLifetime(old) {}
  }
}
