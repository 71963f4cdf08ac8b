/// How an ``HTTPCache`` whose store is shared by several processes sends one request to the
/// origin per key: the lease a process holds while it asks, and how long the others wait for
/// the response it stores.
///
/// It applies when the cache's store is a `LeasingStore` (KilnStorage's `PostgresStore` and
/// `PostgresCache`). A request the cache must forward because nothing usable is stored, or
/// because the stored response is stale, first takes the key's lease: the process that gets it
/// asks the origin, stores the answer and gives the lease back; the others poll the store until
/// a response they may use appears (they answer with it, its `Cache-Status` marked
/// `collapsed`), the lease frees (the first whose poll then takes it asks the origin itself: the
/// holder failed, died, or got a response it could not store), or ``waitTimeout`` passes (they
/// ask the origin without the lease).
///
/// Requests that refuse a stored response however new (`no-cache`, `max-age=0`,
/// `Pragma: no-cache`), and methods other than `GET`, never wait.
///
/// Nor does a request whose stored response must be validated on every use (`no-cache`, or no
/// freshness at all), nor one for a key whose last response this process got under the lease
/// could not be served from the store (not stored: `no-store`, `private` in a shared cache; or
/// stored stale): the process stops waiting for that key for a ``lease``'s time.
///
/// ``waitTimeout`` is longer than ``lease`` by default, so that when a holder dies its waiters
/// take the key over one at a time rather than all give up and ask together.
///
/// - Note: Before a process has seen such a response for a key, its waiters take the lease in
///   turn (as with nginx's `proxy_cache_lock`), each at most ``waitTimeout``.
public struct RequestCollapsing: Sendable {
  /// How long a process may hold a key while it asks the origin: longer than a request takes,
  /// so that a holder that dies blocks the key no longer. 10 seconds by default.
  public var lease: Duration
  /// How long a process waits for another's response before it asks the origin itself:
  /// longer than ``lease``, so that a dead holder's lease runs out first. 15 seconds by default.
  public var waitTimeout: Duration
  /// How often a waiting process looks for the stored response and for a free lease. 20 ms
  /// by default.
  public var pollInterval: Duration
  /// The clock the waits are measured and slept on.
  public var clock: any Clock<Duration>

  /// Creates the settings.
  ///
  /// - Parameters:
  ///   - lease: How long a process may hold a key; 10 seconds by default.
  ///   - waitTimeout: How long a process waits for another's response; 15 seconds by default.
  ///   - pollInterval: How often a waiting process looks; 20 ms by default.
  ///   - clock: The clock of the waits.
  public init(
    lease: Duration = .seconds(10),
    waitTimeout: Duration = .seconds(15),
    pollInterval: Duration = .milliseconds(20),
    clock: any Clock<Duration> = ContinuousClock()
  ) {
    precondition(lease > .zero, "RequestCollapsing lease must be positive")
    precondition(waitTimeout >= .zero, "RequestCollapsing waitTimeout must not be negative")
    precondition(pollInterval > .zero, "RequestCollapsing pollInterval must be positive")
    self.lease = lease
    self.waitTimeout = waitTimeout
    self.pollInterval = pollInterval
    self.clock = clock
  }
}
