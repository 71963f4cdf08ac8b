public import Foundation

/// A bounded list of entries per key in `UserDefaults` (Lynn's list storage manager).
///
/// ```swift
/// let responses = UserDefaultsListStore<String, Data>(defaults: suite, maximumEntriesPerKey: 5)
/// try responses.append(body, forKey: "feed", expiresAt: .now.addingTimeInterval(600))
/// let valid = responses.entries(forKey: "feed")      // oldest first, expired ones dropped
/// ```
///
/// Appending keeps at most ``maximumEntriesPerKey`` entries per key, dropping expired ones
/// first and then the oldest (the seed's lists grew without bound).
///
/// Concurrent appends — from any thread, through any list store of the process on the same
/// `UserDefaults` object — lose nothing, and no lock is held while `UserDefaults` stores a
/// list (its change observers may append in turn).
///
/// As a `KeyValueStore`, ``setValue(_:forKey:expiresAt:)`` appends and
/// ``entry(forKey:)`` answers the **newest** valid entry, so that a value read back is the
/// value last written, as with every store. Lynn's handler used the first (oldest) valid
/// entry: that is `entries(forKey:).first`.
public final class UserDefaultsListStore<Key: Hashable & Sendable, Value: Sendable>: KeyValueStore, Sendable {
  private let box: UserDefaultsBox
  private let keyCodec: StoreCodec<Key>
  private let valueCodec: StoreCodec<Value>
  private let now: @Sendable () -> Date

  /// The prefix of every preference name this store writes.
  public let keyPrefix: String

  /// The largest number of entries kept per key.
  public let maximumEntriesPerKey: Int

  /// How long an entry stored without an explicit expiry lives; `nil` for until dropped.
  public let entryLifetime: Duration?

  /// Creates a list store over `defaults`.
  ///
  /// - Parameters:
  ///   - defaults: The defaults; `.standard` by default. Prefer a suite of your own.
  ///   - keyPrefix: The prefix of the preference names (`<keyPrefix>str:…` and
  ///     `<keyPrefix>bin:…`); `kiln.list.` by default.
  ///   - maximumEntriesPerKey: The bound of each list; 10 by default; at least 1.
  ///   - entryLifetime: How long entries stored without an explicit expiry live.
  ///   - keyCodec: How keys become preference names.
  ///   - valueCodec: How values become bytes.
  ///   - now: The wall clock that stamps and expires entries.
  public init(
    defaults: UserDefaults = .standard,
    keyPrefix: String = "kiln.list.",
    maximumEntriesPerKey: Int = 10,
    entryLifetime: Duration? = nil,
    keyCodec: StoreCodec<Key>,
    valueCodec: StoreCodec<Value>,
    now: @escaping @Sendable () -> Date = Date.init
  ) {
    precondition(maximumEntriesPerKey >= 1, "UserDefaultsListStore maximumEntriesPerKey must be at least 1")
    EntryLifetime.validate(entryLifetime, of: "UserDefaultsListStore")
    box = UserDefaultsBox(defaults)
    self.keyPrefix = keyPrefix
    self.maximumEntriesPerKey = maximumEntriesPerKey
    self.entryLifetime = entryLifetime
    self.keyCodec = keyCodec
    self.valueCodec = valueCodec
    self.now = now
  }

  /// The valid entries stored under `key`, oldest first.
  ///
  /// Entries that do not decode are skipped.
  public func entries(forKey key: Key) -> [CacheEntry<Value>] {
    guard let name = try? preferenceName(for: key) else { return [] }
    let instant = now()
    return stored(name).compactMap { DefaultsEntry.decode($0, valueCodec) }.filter { !$0.isExpired(at: instant) }
  }

  /// Appends `value` to the list of `key`, then drops expired entries and the oldest ones
  /// beyond ``maximumEntriesPerKey``.
  ///
  /// - Parameters:
  ///   - value: The value to append.
  ///   - key: Its key.
  ///   - expiresAt: When it expires; `nil` applies ``entryLifetime``.
  /// - Throws: ``UserDefaultsStoreError``; the list is unchanged then.
  public func append(_ value: Value, forKey key: Key, expiresAt: Date? = nil) throws(UserDefaultsStoreError) {
    let name = try preferenceName(for: key)
    let stamp = now()
    let entry = CacheEntry(
      value: value, storedAt: stamp,
      expiresAt: EntryLifetime.expiry(expiresAt, storedAt: stamp, lifetime: entryLifetime))
    let encoded = try DefaultsEntry.encode(entry, valueCodec)
    let maximum = maximumEntriesPerKey
    let instant = stamp.timeIntervalSinceReferenceDate
    // Decided from the latest list (an append still running in this process included), so
    // that concurrent appends lose nothing; applied outside the lock, which observers of
    // the defaults' change notifications must not run under. Only headers are read under
    // it: no codec (user code) runs while it is held.
    DefaultsChanges.shared.change(name, in: box.defaults) { current in
      guard case .list(let stored) = current else { return .set(.list([encoded])) }
      var list = stored.filter { data in
        DefaultsEntry.expiry(of: data).map { instant <= $0 } ?? false
      }
      list.append(encoded)
      return .set(.list(Array(list.suffix(maximum))))
    }
  }

  /// The newest valid entry of `key`'s list, or `nil`.
  public func entry(forKey key: Key) -> CacheEntry<Value>? {
    entries(forKey: key).last
  }

  /// Appends `value` to `key`'s list (see ``append(_:forKey:expiresAt:)``).
  ///
  /// - Throws: ``UserDefaultsStoreError``.
  public func setValue(_ value: Value, forKey key: Key, expiresAt: Date?) throws(UserDefaultsStoreError) {
    try append(value, forKey: key, expiresAt: expiresAt)
  }

  /// Removes `key`'s whole list.
  ///
  /// - Throws: ``UserDefaultsStoreError/keyEncodingFailed(_:)``.
  public func removeValue(forKey key: Key) throws(UserDefaultsStoreError) {
    let name = try preferenceName(for: key)
    DefaultsChanges.shared.change(name, in: box.defaults) { _ in .remove }
  }

  /// Removes every list this store writes: the preferences named `<keyPrefix>str:…` or
  /// `<keyPrefix>bin:…`.
  public func removeAll() {
    DefaultsEntry.removeAll(prefix: keyPrefix, from: box.defaults)
  }

  private func stored(_ name: String) -> [Data] {
    (box.defaults.array(forKey: name) ?? []).compactMap { $0 as? Data }
  }

  private func preferenceName(for key: Key) throws(UserDefaultsStoreError) -> String {
    do { return DefaultsEntry.name(prefix: keyPrefix, key: try keyCodec.encode(key)) } catch {
      throw .keyEncodingFailed(error)
    }
  }
}

extension UserDefaultsListStore where Key: Codable, Value: Codable {
  /// Creates a list store over `defaults`, coding keys and values with
  /// ``StoreCodec/automatic``.
  ///
  /// - Parameters:
  ///   - defaults: The defaults; `.standard` by default.
  ///   - keyPrefix: The prefix of the preference names; `kiln.list.` by default.
  ///   - maximumEntriesPerKey: The bound of each list; 10 by default.
  ///   - entryLifetime: How long entries stored without an explicit expiry live.
  ///   - now: The wall clock that stamps and expires entries.
  public convenience init(
    defaults: UserDefaults = .standard,
    keyPrefix: String = "kiln.list.",
    maximumEntriesPerKey: Int = 10,
    entryLifetime: Duration? = nil,
    now: @escaping @Sendable () -> Date = Date.init
  ) {
    self.init(
      defaults: defaults, keyPrefix: keyPrefix, maximumEntriesPerKey: maximumEntriesPerKey,
      entryLifetime: entryLifetime, keyCodec: .automatic, valueCodec: .automatic, now: now)
  }
}
