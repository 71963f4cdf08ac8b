public import Foundation
import _KilnSynchronization

/// A `KeyValueStore` in `UserDefaults`: one preference per key (Lynn's item storage
/// manager).
///
/// ```swift
/// let store = UserDefaultsStore<String, Settings>(defaults: UserDefaults(suiteName: "com.example.cache")!)
/// try store.setValue(settings, forKey: "settings", expiresAt: nil)
/// let saved = store.value(forKey: "settings")
/// ```
///
/// Each entry is one `Data` preference named `<keyPrefix>str:<key>` (or `<keyPrefix>bin:<hex>`
/// for keys that are not text), holding the encoded value, its dates and a checksum; a
/// preference that does not decode reads as a miss and is removed. Works on Linux too
/// (swift-corelibs-foundation's `UserDefaults`, with a suite name).
///
/// - Important: `UserDefaults` is loaded into memory whole and suits small values —
///   settings, tokens, a few responses. For many or large entries use ``DiskCache`` or
///   ``SQLiteStore``.
public final class UserDefaultsStore<Key: Hashable & Sendable, Value: Sendable>: KeyValueStore, Sendable {
  private let box: UserDefaultsBox
  private let keyCodec: StoreCodec<Key>
  private let valueCodec: StoreCodec<Value>
  private let now: @Sendable () -> Date
  /// What the store did: see `statistics`.
  let counters = StoreCounters()

  /// The prefix of every preference name this store writes.
  public let keyPrefix: String

  /// How long an entry stored without an explicit expiry lives; `nil` for until removed.
  public let entryLifetime: Duration?

  /// The defaults the store reads and writes.
  public var defaults: UserDefaults { box.defaults }

  /// Creates a store over `defaults`.
  ///
  /// - Parameters:
  ///   - defaults: The defaults; `.standard` by default. Prefer a suite of your own.
  ///   - keyPrefix: The prefix of the preference names: the store writes `<keyPrefix>str:…`
  ///     and `<keyPrefix>bin:…`, and ``removeAll()`` removes exactly those. `kiln.` by default.
  ///   - entryLifetime: How long entries stored without an explicit expiry live; `nil` (the
  ///     default) keeps them until removed.
  ///   - keyCodec: How keys become preference names.
  ///   - valueCodec: How values become bytes.
  ///   - now: The wall clock that stamps and expires entries.
  public init(
    defaults: UserDefaults = .standard,
    keyPrefix: String = "kiln.",
    entryLifetime: Duration? = nil,
    keyCodec: StoreCodec<Key>,
    valueCodec: StoreCodec<Value>,
    now: @escaping @Sendable () -> Date = Date.init
  ) {
    EntryLifetime.validate(entryLifetime, of: "UserDefaultsStore")
    box = UserDefaultsBox(defaults)
    self.keyPrefix = keyPrefix
    self.entryLifetime = entryLifetime
    self.keyCodec = keyCodec
    self.valueCodec = valueCodec
    self.now = now
  }

  /// The entry stored under `key`, or `nil` when there is none, it has expired or it does
  /// not decode (then the preference is removed, unless a Kiln store of this process has
  /// written it again since it was read).
  ///
  /// - Throws: ``UserDefaultsStoreError/keyEncodingFailed(_:)``.
  public func entry(forKey key: Key) throws(UserDefaultsStoreError) -> CacheEntry<Value>? {
    let name = try preferenceName(for: key)
    guard let data = box.defaults.data(forKey: name) else {
      counters.add(.misses)
      return nil
    }
    let decoded = DefaultsEntry.decode(data, valueCodec)
    guard let entry = decoded, !entry.isExpired(at: now()) else {
      counters.add(.misses)
      counters.add(decoded == nil ? .unreadableEntries : .expiredReads)
      // The codec and `now` ran after the read: a newer value may be stored by now.
      DefaultsChanges.shared.change(name, in: box.defaults) { current in
        current == .data(data) ? .remove : .keep
      }
      return nil
    }
    counters.add(.hits)
    return entry
  }

  /// The value stored under `key`, or `nil`.
  public func value(forKey key: Key) -> Value? {
    (try? entry(forKey: key))?.value
  }

  /// Stores `value` under `key`, replacing any previous value.
  ///
  /// - Parameters:
  ///   - value: The value to store.
  ///   - key: Its key.
  ///   - expiresAt: When it expires; `nil` applies ``entryLifetime``.
  /// - Throws: ``UserDefaultsStoreError``; nothing changes then.
  public func setValue(_ value: Value, forKey key: Key, expiresAt: Date?) throws(UserDefaultsStoreError) {
    let name = try preferenceName(for: key)
    let stamp = now()
    let entry = CacheEntry(
      value: value, storedAt: stamp,
      expiresAt: EntryLifetime.expiry(expiresAt, storedAt: stamp, lifetime: entryLifetime))
    let encoded = try DefaultsEntry.encode(entry, valueCodec)
    DefaultsChanges.shared.change(name, in: box.defaults) { _ in .set(.data(encoded)) }
    counters.add(.writes)
    counters.add(.writtenBytes, name.utf8.count + encoded.count)
  }

  /// Removes the value stored under `key`.
  ///
  /// - Throws: ``UserDefaultsStoreError/keyEncodingFailed(_:)``.
  public func removeValue(forKey key: Key) throws(UserDefaultsStoreError) {
    DefaultsChanges.shared.change(try preferenceName(for: key), in: box.defaults) { _ in .remove }
    counters.add(.removals)
  }

  /// Removes every preference this store writes: those named `<keyPrefix>str:…` or
  /// `<keyPrefix>bin:…`.
  ///
  /// Other preferences that merely start with ``keyPrefix`` — a ``UserDefaultsListStore``'s
  /// `kiln.list.…` lists under the default prefixes, say — are left alone.
  public func removeAll() {
    DefaultsEntry.removeAll(prefix: keyPrefix, from: box.defaults)
  }

  private func preferenceName(for key: Key) throws(UserDefaultsStoreError) -> String {
    do { return DefaultsEntry.name(prefix: keyPrefix, key: try keyCodec.encode(key)) } catch {
      throw .keyEncodingFailed(error)
    }
  }
}

extension UserDefaultsStore where Key: Codable, Value: Codable {
  /// Creates a store over `defaults`, coding keys and values with ``StoreCodec/automatic``.
  ///
  /// ```swift
  /// let store = UserDefaultsStore<String, Token>(defaults: UserDefaults(suiteName: "auth")!)
  /// ```
  ///
  /// - Parameters:
  ///   - defaults: The defaults; `.standard` by default.
  ///   - keyPrefix: The prefix of the preference names; `kiln.` by default.
  ///   - entryLifetime: How long entries stored without an explicit expiry live.
  ///   - now: The wall clock that stamps and expires entries.
  public convenience init(
    defaults: UserDefaults = .standard,
    keyPrefix: String = "kiln.",
    entryLifetime: Duration? = nil,
    now: @escaping @Sendable () -> Date = Date.init
  ) {
    self.init(
      defaults: defaults, keyPrefix: keyPrefix, entryLifetime: entryLifetime, keyCodec: .automatic,
      valueCodec: .automatic, now: now)
  }
}

/// Why a ``UserDefaultsStore`` or ``UserDefaultsListStore`` call failed.
public enum UserDefaultsStoreError: Error, Sendable, CustomStringConvertible {
  /// The key codec could not encode the key.
  case keyEncodingFailed(any Error)

  /// The value codec could not encode the value; nothing changed.
  case valueEncodingFailed(any Error)

  public var description: String {
    switch self {
    case .keyEncodingFailed(let error): "user defaults store: the key could not be encoded: \(error)"
    case .valueEncodingFailed(let error): "user defaults store: the value could not be encoded: \(error)"
    }
  }
}

/// Holds a `UserDefaults`.
///
/// Why `@unchecked Sendable` is sound: `UserDefaults` is documented as thread-safe — its
/// methods may be called from any thread concurrently — on Apple platforms and in
/// swift-corelibs-foundation (which guards its state with a lock), but is not marked
/// `Sendable` on every platform.
final class UserDefaultsBox: @unchecked Sendable {
  let defaults: UserDefaults
  init(_ defaults: UserDefaults) { self.defaults = defaults }
}

/// The encoding of one entry in a preference: an entry file's bytes (header, value,
/// checksum) with an empty key.
enum DefaultsEntry {
  static func encode<Value>(
    _ entry: CacheEntry<Value>, _ codec: StoreCodec<Value>
  ) throws(UserDefaultsStoreError) -> Data {
    let bytes: Data
    do { bytes = try codec.encode(entry.value) } catch { throw .valueEncodingFailed(error) }
    return Data(
      EntryFile.encode(
        key: [], value: [UInt8](bytes), storedAt: entry.storedAt.timeIntervalSinceReferenceDate,
        expiresAt: entry.expiresAt?.timeIntervalSinceReferenceDate ?? .infinity))
  }

  static func decode<Value>(_ data: Data, _ codec: StoreCodec<Value>) -> CacheEntry<Value>? {
    guard case .entry(let storedAt, let expiresAt, let range) = EntryFile.decode([UInt8](data), expectedKey: []),
      let value = try? codec.decode(data.subdata(in: range))
    else { return nil }
    return CacheEntry(
      value: value, storedAt: Date(timeIntervalSinceReferenceDate: storedAt),
      expiresAt: expiresAt == .infinity ? nil : Date(timeIntervalSinceReferenceDate: expiresAt))
  }

  /// The expiry (seconds since the reference date, `.infinity` for never) of an intact
  /// entry, read without decoding its value; `nil` when the bytes are not an entry.
  static func expiry(of data: Data) -> Double? {
    guard case .entry(_, let expiresAt, _) = EntryFile.decode([UInt8](data), expectedKey: []) else { return nil }
    return expiresAt
  }

  /// `<prefix>str:<key>` for UTF-8 keys without NUL, `<prefix>bin:<hex>` otherwise.
  ///
  /// ``removeAll(prefix:from:)`` relies on these two forms.
  static func name(prefix: String, key: Data) -> String {
    if !key.contains(0), let text = String(data: key, encoding: .utf8) {
      return prefix + "str:" + text
    }
    return prefix + "bin:" + key.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
  }

  /// Removes the preferences named by ``name(prefix:key:)`` for `prefix`, and no others.
  static func removeAll(prefix: String, from defaults: UserDefaults) {
    let text = prefix + "str:"
    let binary = prefix + "bin:"
    for name in defaults.dictionaryRepresentation().keys where name.hasPrefix(text) || name.hasPrefix(binary) {
      DefaultsChanges.shared.change(name, in: defaults) { _ in .remove }
    }
  }
}

extension String {
  fileprivate func leftPadded(to length: Int) -> String {
    count >= length ? self : String(repeating: "0", count: length - count) + self
  }
}
