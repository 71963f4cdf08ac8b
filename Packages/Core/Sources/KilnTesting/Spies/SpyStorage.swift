public import Foundation
public import KilnCore
import _KilnSynchronization

/// An in-memory `Storage` for tests that counts every access and can be told to
/// fail.
///
/// ```swift
/// let cache = SpyStorage<Int>(value: 1, now: clock.dateProvider)
/// _ = try await cache.expiring(validationPolicy: .neverValid).result()
/// #expect(cache.loadCount == 0)          // the policy kept the storage from being read
/// ```
public final class SpyStorage<Value: Sendable>: Storage, Sendable {
  private struct State {
    var value: Value?
    var timestamp: Date?
    var loads = 0
    var saves: [Value] = []
    var clears = 0
    var timestampReads = 0
    var loadError: (any Error)?
    var saveError: (any Error)?
  }

  private let state: KilnMutex<State>
  private let now: @Sendable () -> Date

  /// Creates a storage.
  ///
  /// - Parameters:
  ///   - value: The starting value; `nil` for empty.
  ///   - timestamp: The starting value's timestamp; defaults to `now()` when `value` is set.
  ///   - now: The clock that stamps saves.
  public init(value: Value? = nil, timestamp: Date? = nil, now: @escaping @Sendable () -> Date = Date.init) {
    self.now = now
    state = KilnMutex(State(value: value, timestamp: value == nil ? nil : (timestamp ?? now())))
  }

  /// The value held now, without counting as a load.
  public var value: Value? {
    state.withLock { $0.value }
  }

  /// How many times ``load()`` ran.
  public var loadCount: Int {
    state.withLock { $0.loads }
  }

  /// How many times ``save(_:)`` ran, failed saves included.
  public var saveCount: Int {
    state.withLock { $0.saves.count }
  }

  /// Every value passed to ``save(_:)``, in order, failed saves included.
  public var savedValues: [Value] {
    state.withLock { $0.saves }
  }

  /// How many times ``clear()`` ran.
  public var clearCount: Int {
    state.withLock { $0.clears }
  }

  /// How many times ``timestamp`` was read.
  public var timestampReadCount: Int {
    state.withLock { $0.timestampReads }
  }

  /// Makes later loads throw `error` (`nil` restores normal loads).
  public func failLoads(with error: (any Error)?) {
    state.withLock { $0.loadError = error }
  }

  /// Makes later saves throw `error` without storing (`nil` restores normal saves).
  public func failSaves(with error: (any Error)?) {
    state.withLock { $0.saveError = error }
  }

  public var timestamp: Date? {
    state.withLock { state in
      state.timestampReads += 1
      return state.timestamp
    }
  }

  public func load() async throws -> Value {
    let outcome: Result<Value, any Error> = state.withLock { state in
      state.loads += 1
      if let error = state.loadError { return .failure(error) }
      guard let value = state.value else { return .failure(StorageError.empty) }
      return .success(value)
    }
    return try outcome.get()
  }

  public func save(_ value: Value) async throws {
    let date = now()
    try state.withLock { state in
      state.saves.append(value)
      if let error = state.saveError { throw error }
      state.value = value
      state.timestamp = date
    }
  }

  public func clear() async throws {
    state.withLock { state in
      state.clears += 1
      state.value = nil
      state.timestamp = nil
    }
  }
}
