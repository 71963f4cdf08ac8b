public import Foundation
import _KilnSynchronization

/// An RFC 9111 HTTP cache that keeps responses in any `KeyValueStore` of `Data`.
///
/// The cache stores what ``HTTPCachePolicy`` allows and answers what it decides; put it in
/// front of a transport with ``Transport/caching(in:)``:
///
/// ```swift
/// let cache = HTTPCache(store: MemoryCache<String, Data>(countLimit: 1_000, entryLifetime: nil))
/// let transport = URLSessionTransport().caching(in: cache)
/// let response = try await transport.send(HTTPRequest(url: articlesURL))
/// response.cacheStatus?.hit     // true on a fresh hit
/// ```
///
/// Responses are keyed by URL (without fragment); the variants of one URL selected by `Vary`
/// are kept together, newest first, at most ``maximumVariants`` of them. Any store works:
/// KilnStorage's `MemoryCache` and `DiskCache`, SQLite, PostgreSQL. The cache is best effort:
/// a store that cannot be read is a miss, one that cannot be written leaves the response
/// unstored, and an entry that cannot be decoded (a corrupt or foreign value) is a miss and is
/// removed.
///
/// A fresh hit is a lookup: the cache keeps the decoded form of the entries it read or wrote
/// last (up to 512, of at most 256 KB each) beside the store's bytes, and uses it only while
/// the store still holds those very bytes. The store stays the source of truth: an entry
/// changed by another process sharing the store, removed or expired is seen at once.
///
/// Over a store several processes share that offers a lease (a `LeasingStore`: KilnStorage's
/// `PostgresStore` and `PostgresCache`), the processes that miss one URL together send one
/// request to the origin and the others wait for the response it stores: see
/// ``RequestCollapsing``, on by default for such a store.
///
/// - Important: Entries are written with `expiresAt: .distantFuture` so that stale responses
///   stay available for revalidation and `stale-if-error`; bound the store by count or size.
public final class HTTPCache: Sendable {
  /// The rules the cache follows.
  public let policy: HTTPCachePolicy
  /// The largest number of `Vary` variants kept per URL.
  public let maximumVariants: Int
  /// The wall clock the cache judges freshness by.
  public let now: @Sendable () -> Date

  /// How processes sharing the store send one request per key to the origin; `nil` when the
  /// store offers no lease (it is no `LeasingStore`) or collapsing was turned off.
  public let collapsing: RequestCollapsing?
  /// The store, as the lease provider collapsing uses.
  let leasing: (any LeasingStore<String>)?
  /// Keys whose last response under the lease could not be served from the store, until when
  /// this process does not wait for them (at most 1,024 kept).
  private let passing = KilnMutex<[String: Date]>([:])

  private let store: any KeyValueStore<String, Data>
  /// Reads an entry from ``store``: a closure made where the store's type is known, so that a
  /// lookup in a store with an inlinable read path (`MemoryCache`) is specialised rather than
  /// going through the generic protocol witness (a fifth of a fresh hit).
  private let readEntry: @Sendable (String) async -> CacheEntry<Data>?
  /// Reads and removes an entry without suspending, when ``store`` is a
  /// `SynchronousKeyValueStore` (a `MemoryCache`): a fresh hit is then answered with no
  /// asynchronous call (their frames and executor checks were a tenth of a hit). Closures
  /// made where the store's type is known, as `readEntry`.
  private let readNow: (@Sendable (String) -> CacheEntry<Data>?)?
  private let removeNow: (@Sendable (String) -> Void)?
  /// The decoded form of the entries read or written last.
  let decoded = DecodedEntries()
  private let revalidations = KilnMutex<[String: Task<Void, Never>]>([:])
  /// What the cache did: see ``statistics``.
  let counters = AtomicCounters<HTTPCacheCounter>()

  /// What the cache did since it was created: hits, misses, revalidations and their outcome,
  /// stores. Reading it costs a few atomic loads.
  public var statistics: HTTPCacheStatistics {
    HTTPCacheStatistics(counters)
  }

  /// Creates a cache over `store`; over a `LeasingStore`, processes collapse their requests
  /// with ``RequestCollapsing``'s defaults.
  ///
  /// - Parameters:
  ///   - store: Where the responses are kept.
  ///   - policy: The caching rules; a private cache by default.
  ///   - maximumVariants: How many `Vary` variants to keep per URL; 8 by default.
  ///   - now: The wall clock; `Date.init` by default.
  @inlinable
  public convenience init(
    store: some KeyValueStore<String, Data>,
    policy: HTTPCachePolicy = .private,
    maximumVariants: Int = 8,
    now: @escaping @Sendable () -> Date = Date.init
  ) {
    self.init(
      store: store, readEntry: { key in try? await store.entry(forKey: key) }, policy: policy,
      maximumVariants: maximumVariants, now: now)
  }

  /// Creates a cache over `store`, saying how processes sharing it collapse their requests.
  ///
  /// ```swift
  /// let cache = HTTPCache(
  ///   store: postgresStore, policy: .shared,
  ///   collapsing: RequestCollapsing(lease: .seconds(10), waitTimeout: .seconds(5)))
  /// ```
  ///
  /// - Parameters:
  ///   - store: Where the responses are kept.
  ///   - policy: The caching rules.
  ///   - maximumVariants: How many `Vary` variants to keep per URL; 8 by default.
  ///   - collapsing: How processes sharing a `LeasingStore` send one request per key to the
  ///     origin; `nil` to let each process ask for itself. Ignored for a store that is no
  ///     `LeasingStore`.
  ///   - now: The wall clock; `Date.init` by default.
  @inlinable
  public convenience init(
    store: some KeyValueStore<String, Data>,
    policy: HTTPCachePolicy = .private,
    maximumVariants: Int = 8,
    collapsing: RequestCollapsing?,
    now: @escaping @Sendable () -> Date = Date.init
  ) {
    self.init(
      store: store, readEntry: { key in try? await store.entry(forKey: key) }, policy: policy,
      maximumVariants: maximumVariants, collapsing: collapsing, now: now)
  }

  /// Creates a cache over a store that answers without suspending (a `MemoryCache`): a fresh
  /// hit is then answered with no asynchronous call.
  ///
  /// - Parameters:
  ///   - store: Where the responses are kept.
  ///   - policy: The caching rules; a private cache by default.
  ///   - maximumVariants: How many `Vary` variants to keep per URL; 8 by default.
  ///   - now: The wall clock; `Date.init` by default.
  @inlinable
  public convenience init(
    store: some SynchronousKeyValueStore<String, Data>,
    policy: HTTPCachePolicy = .private,
    maximumVariants: Int = 8,
    now: @escaping @Sendable () -> Date = Date.init
  ) {
    self.init(
      store: store, policy: policy, maximumVariants: maximumVariants, collapsing: RequestCollapsing(), now: now)
  }

  /// Creates a cache over a store that answers without suspending (a `MemoryCache`), saying
  /// how processes sharing it collapse their requests (ignored for a store that is no
  /// `LeasingStore`).
  ///
  /// - Parameters:
  ///   - store: Where the responses are kept.
  ///   - policy: The caching rules.
  ///   - maximumVariants: How many `Vary` variants to keep per URL; 8 by default.
  ///   - collapsing: How processes sharing a `LeasingStore` send one request per key to the
  ///     origin; `nil` to let each process ask for itself.
  ///   - now: The wall clock; `Date.init` by default.
  @inlinable
  public convenience init(
    store: some SynchronousKeyValueStore<String, Data>,
    policy: HTTPCachePolicy = .private,
    maximumVariants: Int = 8,
    collapsing: RequestCollapsing?,
    now: @escaping @Sendable () -> Date = Date.init
  ) {
    let read: @Sendable (String) -> CacheEntry<Data>? = { key in store.entry(forKey: key) }
    self.init(
      store: store, readEntry: { key in read(key) }, readNow: read,
      removeNow: { key in store.removeValue(forKey: key) }, policy: policy, maximumVariants: maximumVariants,
      collapsing: collapsing, now: now)
  }

  @usableFromInline
  convenience init(
    store: any KeyValueStore<String, Data>,
    readEntry: @escaping @Sendable (String) async -> CacheEntry<Data>?,
    policy: HTTPCachePolicy,
    maximumVariants: Int,
    now: @escaping @Sendable () -> Date
  ) {
    self.init(
      store: store, readEntry: readEntry, policy: policy, maximumVariants: maximumVariants,
      collapsing: RequestCollapsing(), now: now)
  }

  @usableFromInline
  convenience init(
    store: any KeyValueStore<String, Data>,
    readEntry: @escaping @Sendable (String) async -> CacheEntry<Data>?,
    policy: HTTPCachePolicy,
    maximumVariants: Int,
    collapsing: RequestCollapsing?,
    now: @escaping @Sendable () -> Date
  ) {
    self.init(
      store: store, readEntry: readEntry, readNow: nil, removeNow: nil, policy: policy,
      maximumVariants: maximumVariants, collapsing: collapsing, now: now)
  }

  @usableFromInline
  init(
    store: any KeyValueStore<String, Data>,
    readEntry: @escaping @Sendable (String) async -> CacheEntry<Data>?,
    readNow: (@Sendable (String) -> CacheEntry<Data>?)?,
    removeNow: (@Sendable (String) -> Void)?,
    policy: HTTPCachePolicy,
    maximumVariants: Int,
    collapsing: RequestCollapsing?,
    now: @escaping @Sendable () -> Date
  ) {
    precondition(maximumVariants >= 1, "HTTPCache maximumVariants must be at least 1")
    self.store = store
    self.readEntry = readEntry
    self.readNow = readNow
    self.removeNow = removeNow
    self.policy = policy
    self.maximumVariants = maximumVariants
    self.now = now
    leasing = collapsing == nil ? nil : store as? any LeasingStore<String>
    self.collapsing = leasing == nil ? nil : collapsing
  }

  /// The store key of `url`: the URL without its fragment.
  public static func key(for url: URL) -> String {
    let text = url.absoluteString
    guard let hash = text.utf8.firstIndex(of: UInt8(ascii: "#")) else { return text }
    return String(text[..<hash])
  }

  // MARK: - Reading

  /// Every stored variant for `url`, newest first; empty when none, or when the stored entry
  /// is corrupt (it is then removed) or the store cannot be read.
  public func storedResponses(for url: URL) async -> [StoredHTTPResponse] {
    if let variants = storedResponsesInMemory(for: url) { return variants }
    let key = Self.key(for: url)
    guard let entry = await readEntry(key) else { return [] }
    if let variants = variants(decodedFrom: entry.value, forKey: key) { return variants }
    try? await store.removeValue(forKey: key)
    return []
  }

  /// ``storedResponses(for:)`` without suspending, when the store is a `MemoryCache`; `nil`
  /// for any other store.
  func storedResponsesInMemory(for url: URL) -> [StoredHTTPResponse]? {
    guard let readNow, let removeNow else { return nil }
    let key = Self.key(for: url)
    guard let entry = readNow(key) else { return [] }
    if let variants = variants(decodedFrom: entry.value, forKey: key) { return variants }
    removeNow(key)
    return []
  }

  /// What `bytes`, read from the store under `key`, decode to: the variants decoded from the
  /// same bytes before, or decoded now and remembered. `nil` when they are corrupt: counted
  /// and forgotten, for the caller to remove from the store.
  private func variants(decodedFrom bytes: Data, forKey key: String) -> [StoredHTTPResponse]? {
    if let variants = decoded.variants(forKey: key, bytes: bytes) { return variants }
    do {
      let variants = try StoredResponseCodec.decode(bytes)
      decoded.remember(variants, decodedFrom: bytes, forKey: key)
      return variants
    } catch {
      counters.add(.corruptEntries)
      decoded.forget(key)
      return nil
    }
  }

  /// The stored response that may answer `request` as far as `Vary` goes, the newest first;
  /// `nil` when there is none.
  public func storedResponse(for request: HTTPRequest) async -> StoredHTTPResponse? {
    StoredHTTPResponse.selected(await storedResponses(for: request.url), for: request)
  }

  /// What the cache does with `request` now: the stored response ``storedResponse(for:)``
  /// selects, judged by ``policy`` at ``now``.
  public func decision(for request: HTTPRequest) async -> HTTPCacheDecision {
    guard request.method == .get else { return policy.decision(for: request, stored: nil, now: now()) }
    let variants = await storedResponses(for: request.url)
    let stored = StoredHTTPResponse.selected(variants, for: request) ?? variants.first
    return policy.decision(for: request, stored: stored, now: now())
  }

  // MARK: - Writing

  /// Stores `stored` as the response to `request`, replacing the variants it supersedes (those
  /// that match `request`'s `Vary` fields) and keeping at most ``maximumVariants``. A `206`
  /// never replaces a complete response.
  public func store(_ stored: StoredHTTPResponse, for request: HTTPRequest) async {
    await storeUnlessPartialOverWhole(stored, for: request)
  }

  /// ``store(_:for:)``, telling whether `stored` was taken: `false` when it is a `206` and a
  /// complete response that `request` selects is stored (another task may have stored the
  /// whole since the partial was asked for).
  @discardableResult
  func storeUnlessPartialOverWhole(_ stored: StoredHTTPResponse, for request: HTTPRequest) async -> Bool {
    let previous = await storedResponses(for: request.url)
    // Part of a representation never takes the place of all of it.
    if stored.response.status == 206,
      previous.contains(where: { $0.response.status != 206 && $0.matchesVary(of: request) })
    {
      return false
    }
    var variants = [stored]
    for variant in previous
    where variants.count < maximumVariants && !variant.matchesVary(of: request)
      && variant.varyNames == stored.varyNames
    {
      variants.append(variant)
    }
    let key = Self.key(for: request.url)
    let bytes = StoredResponseCodec.encode(variants)
    do {
      try await store.setValue(bytes, forKey: key, expiresAt: .distantFuture)
      decoded.remember(variants, decodedFrom: bytes, forKey: key)
      counters.add(.stores)
      counters.add(.storedBytes, bytes.count)
    } catch {
      counters.add(.storeFailures)
      decoded.forget(key)
    }
    return true
  }

  /// Removes every stored response for `url`.
  public func invalidate(_ url: URL) async {
    let key = Self.key(for: url)
    counters.add(.invalidations)
    decoded.forget(key)
    try? await store.removeValue(forKey: key)
  }

  /// Removes every stored response.
  ///
  /// - Throws: When the store cannot be written.
  public func removeAll() async throws {
    decoded.forgetAll()
    try await store.removeAll()
  }

  // MARK: - Collapsing

  /// Whether this process stops waiting for `key`: its last response under the lease could not
  /// be served from the store.
  func passes(_ key: String) -> Bool {
    let now = now()
    return passing.withLock { passing in
      guard let until = passing[key] else { return false }
      if until > now { return true }
      passing[key] = nil
      return false
    }
  }

  /// Stops waiting for `key` for `duration`.
  func pass(_ key: String, for duration: Duration) {
    let until = now().addingTimeInterval(duration.timeInterval)
    passing.withLock { passing in
      if passing.count >= 1_024 { passing.removeAll() }
      passing[key] = until
    }
  }

  // MARK: - Background revalidation

  /// Starts `operation` as the background revalidation of `key` unless one is already running.
  ///
  /// - Returns: Whether it was started.
  @discardableResult
  func revalidateInBackground(key: String, _ operation: @escaping @Sendable () async -> Void) -> Bool {
    revalidations.withLock { tasks in
      guard tasks[key] == nil else { return false }
      tasks[key] = Task { [weak self] in
        #if Tracing
          // The request that started it has returned and its span ended: a retry of the
          // revalidation must not add events to it.
          await RequestTracing.$currentSpan.withValue(nil) { await operation() }
        #else
          await operation()
        #endif
        self?.finishRevalidation(key: key)
      }
      return true
    }
  }

  private func finishRevalidation(key: String) {
    _ = revalidations.withLock { $0.removeValue(forKey: key) }
  }

  /// The number of background revalidations (`stale-while-revalidate`) running now.
  public var revalidationsInFlight: Int {
    revalidations.withLock { $0.count }
  }

  /// Waits until no background revalidation is running: call it before shutting a transport
  /// down, or in tests.
  public func waitForRevalidations() async {
    while true {
      let running = revalidations.withLock { Array($0.values) }
      if running.isEmpty { return }
      for task in running { await task.value }
    }
  }
}
