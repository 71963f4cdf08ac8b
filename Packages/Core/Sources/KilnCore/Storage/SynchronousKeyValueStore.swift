/// A ``KeyValueStore`` that also reads and removes without suspending: a store in memory,
/// whose every call is a lock and a lookup.
///
/// Layers over a store look for it to keep their hot path synchronous: an HTTP cache over
/// one answers a fresh hit with no asynchronous call at all. KilnStorage's `MemoryCache`
/// conforms; its synchronous methods satisfy both these requirements and the asynchronous
/// ones of ``KeyValueStore``, and give the same answers.
///
/// ```swift
/// func peek(_ store: some SynchronousKeyValueStore<String, Data>) -> Data? {
///   store.entry(forKey: "greeting")?.value   // no `await`
/// }
/// ```
public protocol SynchronousKeyValueStore<Key, Value>: KeyValueStore {
  /// The entry stored under `key`, or `nil` when there is none or it has expired: what
  /// ``KeyValueStore/entry(forKey:)`` answers, without suspending and without failing.
  func entry(forKey key: Key) -> CacheEntry<Value>?

  /// Removes the entry stored under `key`, if any: ``KeyValueStore/removeValue(forKey:)``
  /// without suspending and without failing.
  func removeValue(forKey key: Key)
}
