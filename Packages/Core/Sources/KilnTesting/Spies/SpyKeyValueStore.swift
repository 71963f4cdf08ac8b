public import Foundation
public import KilnCore
import _KilnSynchronization

/// An in-memory `KeyValueStore` for tests that counts every access, honours
/// expiry on an injected clock, and can be told to fail.
///
/// ```swift
/// let now = ManualDate()
/// let store = SpyKeyValueStore<String, Int>(defaultLifetime: .seconds(60), now: now.provider)
/// try await store.setValue(1, forKey: "a")
/// now.advance(by: .seconds(61))
/// #expect(try await store.value(forKey: "a") == nil)
/// ```
public final class SpyKeyValueStore<Key: Hashable & Sendable, Value: Sendable>: KeyValueStore, Sendable {
  private struct State {
    var entries: [Key: CacheEntry<Value>] = [:]
    var reads = 0
    var writes = 0
    var removals = 0
    var removeAlls = 0
    var readError: (any Error)?
    var writeError: (any Error)?
  }

  private let state = KilnMutex(State())
  private let now: @Sendable () -> Date
  private let defaultLifetime: Duration?

  /// Creates an empty store.
  ///
  /// - Parameters:
  ///   - defaultLifetime: The lifetime of values stored with `expiresAt: nil`; `nil` for
  ///     none.
  ///   - now: The clock that stamps and expires entries.
  public init(defaultLifetime: Duration? = nil, now: @escaping @Sendable () -> Date = Date.init) {
    self.defaultLifetime = defaultLifetime
    self.now = now
  }

  /// Every entry held now, expired ones included, without counting as reads.
  public var entries: [Key: CacheEntry<Value>] {
    state.withLock { $0.entries }
  }

  /// How many times ``entry(forKey:)`` ran.
  public var readCount: Int {
    state.withLock { $0.reads }
  }

  /// How many times ``setValue(_:forKey:expiresAt:)`` ran, failed writes included.
  public var writeCount: Int {
    state.withLock { $0.writes }
  }

  /// How many times ``removeValue(forKey:)`` ran.
  public var removalCount: Int {
    state.withLock { $0.removals }
  }

  /// How many times ``removeAll()`` ran.
  public var removeAllCount: Int {
    state.withLock { $0.removeAlls }
  }

  /// Makes later reads throw `error` (`nil` restores normal reads).
  public func failReads(with error: (any Error)?) {
    state.withLock { $0.readError = error }
  }

  /// Makes later writes and removals throw `error` (`nil` restores them).
  public func failWrites(with error: (any Error)?) {
    state.withLock { $0.writeError = error }
  }

  public func entry(forKey key: Key) async throws -> CacheEntry<Value>? {
    let date = now()
    return try state.withLock { state in
      state.reads += 1
      if let error = state.readError { throw error }
      guard let entry = state.entries[key] else { return nil }
      if entry.isExpired(at: date) {
        state.entries[key] = nil
        return nil
      }
      return entry
    }
  }

  public func setValue(_ value: Value, forKey key: Key, expiresAt: Date?) async throws {
    let date = now()
    let expiry = expiresAt ?? defaultLifetime.map { date.addingTimeInterval($0.timeInterval) }
    try state.withLock { state in
      state.writes += 1
      if let error = state.writeError { throw error }
      state.entries[key] = CacheEntry(value: value, storedAt: date, expiresAt: expiry)
    }
  }

  public func removeValue(forKey key: Key) async throws {
    try state.withLock { state in
      state.removals += 1
      if let error = state.writeError { throw error }
      state.entries[key] = nil
    }
  }

  public func removeAll() async throws {
    try state.withLock { state in
      state.removeAlls += 1
      if let error = state.writeError { throw error }
      state.entries.removeAll()
    }
  }
}
