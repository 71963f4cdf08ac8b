import Foundation

/// A transport that answers from an ``HTTPCache`` where RFC 9111 allows, and sends the rest
/// through another transport.
///
/// Create one with ``Transport/caching(in:)``:
///
/// ```swift
/// let cache = HTTPCache(store: MemoryCache<String, Data>(countLimit: 1_000, entryLifetime: nil))
/// let transport = URLSessionTransport().caching(in: cache)
/// let first = try await transport.send(request)    // from the origin, stored
/// let second = try await transport.send(request)   // from the cache while fresh
/// second.cacheStatus?.hit                          // true
/// ```
///
/// What it does, in the order of ``HTTPCachePolicy``'s decisions:
/// - fresh responses are served with a correct `Age`; stale ones are revalidated with
///   `If-None-Match`/`If-Modified-Since`, and a `304` freshens the stored headers;
/// - `stale-while-revalidate` serves the stale response at once and revalidates it in the
///   background, exactly once however many callers ask meanwhile;
/// - `stale-if-error` serves the stale response when the origin answers 500, 502, 503 or 504 or
///   the connection fails, within the window and never past `must-revalidate`;
/// - when the origin cannot be reached at all, a stale response is served unless the response
///   or the request forbids it (``HTTPCachePolicy/servesStaleWhenDisconnected``);
/// - a stale response that may not be served and cannot be revalidated because the origin
///   cannot be reached, and `only-if-cached` with nothing usable, get a generated `504`;
/// - a successful unsafe request (`POST`, `PUT`, `DELETE`, ...) invalidates the stored
///   responses for its URL and its same-origin `Location` and `Content-Location`.
///
/// Every response carries a `Cache-Status` member (RFC 9211) saying what happened; read it with
/// ``HTTPResponse/cacheStatus``.
public struct CachingTransport<Base: Transport>: Transport {
  /// The transport requests go through when the cache cannot answer.
  public let base: Base
  /// The cache.
  public let cache: HTTPCache

  /// Creates a caching transport; see also ``Transport/caching(in:)``.
  ///
  /// - Parameters:
  ///   - base: The transport that reaches the origin.
  ///   - cache: The cache to answer from and store into.
  public init(base: Base, cache: HTTPCache) {
    self.base = base
    self.cache = cache
  }

  public func send(_ request: HTTPRequest, options: TransportOptions) async throws(TransportError) -> HTTPResponse {
    let exchange = CacheExchange(cache: cache)
    let lookup = exchange.lookUpNow(request)
    if let hit = exchange.hit(lookup) { return hit }
    let base = base
    let background = TransportOptions(maximumBodySize: options.maximumBodySize, redirects: options.redirects)
    do {
      return try await exchange.respond(
        to: request, lookup: lookup,
        send: { request throws(NetworkError) in
          try await RequestNext.transmit(request, options: options, through: base)
        },
        sendInBackground: { request throws(NetworkError) in
          try await RequestNext.transmit(request, options: background, through: base)
        })
    } catch .transport(let error) {
      throw error
    } catch .cancelled {
      throw .cancelled
    } catch {
      throw .other("\(error)")  // the exchange passes on only what `send` threw
    }
  }
}

extension Transport {
  /// This transport behind an RFC 9111 HTTP cache.
  ///
  /// ```swift
  /// let transport = URLSessionTransport().caching(in: HTTPCache(store: MemoryCache<String, Data>()))
  /// ```
  ///
  /// - Parameter cache: The cache to answer from and store into.
  /// - Returns: A ``CachingTransport`` sending through this transport.
  public func caching(in cache: HTTPCache) -> CachingTransport<Self> {
    CachingTransport(base: self, cache: cache)
  }
}
