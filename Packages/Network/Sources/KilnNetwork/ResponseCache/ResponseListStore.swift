public import Foundation
public import KilnCore

/// A ``ResponseStore`` keeping a bounded list of responses per storage key (Lynn's list
/// storage manager), in any `KeyValueStore` of `String` keys and `Data` values.
///
/// Each save appends to the key's list; a read returns the first (oldest) entry still valid.
/// Expired entries are dropped at each save, and the list never holds more than
/// ``maximumCount`` entries: the oldest go first.
///
/// ```swift
/// let storage = ResponseListStore(MemoryCache<String, Data>(), maximumCount: 5)
/// ```
///
/// An entry that cannot be decoded makes the whole list a miss, and the list is removed.
/// Saves to one key from one `ResponseListStore` are serialized, so none is lost.
public actor ResponseListStore<Store: KeyValueStore>: ResponseStore where Store.Key == String, Store.Value == Data {
  /// The underlying store.
  public nonisolated let store: Store

  /// The most entries kept per key.
  public nonisolated let maximumCount: Int

  /// Creates a store.
  ///
  /// - Parameters:
  ///   - store: The underlying store.
  ///   - maximumCount: The most entries kept per key; at least 1; 10 by default.
  public init(_ store: Store, maximumCount: Int = 10) {
    self.store = store
    self.maximumCount = max(maximumCount, 1)
  }

  public func response(forKey key: String, now: Date) async throws -> HTTPResponse? {
    guard let entries = try await entries(forKey: key) else { return nil }
    return entries.first { $0.isValid(at: now) }?.response
  }

  public func save(_ response: HTTPResponse, forKey key: String, validUntil: Date, now: Date) async throws {
    // The actor is reentrant across the store's awaits: queue saves so none overwrites another.
    await lock()
    defer { unlock() }
    var entries = (try await entries(forKey: key) ?? []).filter { $0.isValid(at: now) }
    entries.append(StoredResponse(response, validUntil: validUntil))
    if entries.count > maximumCount { entries.removeFirst(entries.count - maximumCount) }
    let expiresAt = entries.map(\.validUntil).max()
    try await store.setValue(try StoredResponse.serialize(entries), forKey: key, expiresAt: expiresAt)
  }

  public func removeResponses(forKey key: String) async throws {
    await lock()
    defer { unlock() }
    try await store.removeValue(forKey: key)
  }

  private var isWriting = false
  private var writers: [CheckedContinuation<Void, Never>] = []

  private func lock() async {
    guard isWriting else {
      isWriting = true
      return
    }
    await withCheckedContinuation { writers.append($0) }
  }

  private func unlock() {
    if writers.isEmpty {
      isWriting = false
    } else {
      writers.removeFirst().resume()
    }
  }

  /// The key's entries, `nil` when there is none; a list that cannot be decoded is removed.
  private func entries(forKey key: String) async throws -> [StoredResponse]? {
    guard let entry = try await store.entry(forKey: key) else { return nil }
    guard let entries = StoredResponse.deserialize([StoredResponse].self, from: entry.value),
      entries.allSatisfy({ $0.response != nil })
    else {
      try await store.removeValue(forKey: key)
      return nil
    }
    return entries
  }
}
