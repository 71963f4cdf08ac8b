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
    let policy = cache.policy
    guard request.method == .get else {
      let response = try await base.send(request, options: options)
      for url in policy.invalidatedURLs(for: request, response: response) {
        await cache.invalidate(url)
      }
      return Self.tagged(response, status: HTTPCacheStatus(forward: .method, forwardStatus: response.status))
    }
    let variants = await cache.storedResponses(for: request.url)
    let stored = variants.first { $0.matchesVary(of: request) }
    switch policy.decision(for: request, stored: stored ?? variants.first, now: cache.now()) {
    case .serve(let response), .generate(let response):
      return response
    case .serveStale(let response, let revalidation):
      if let stored {
        let options = TransportOptions(maximumBodySize: options.maximumBodySize, redirects: options.redirects)
        cache.revalidateInBackground(key: HTTPCache.key(for: request.url)) {
          _ = try? await self.forward(request, as: revalidation, stored: stored, reason: .stale, options: options)
        }
      }
      return response
    case .forward(let forwarded, let reason):
      return try await forward(request, as: forwarded, stored: stored, reason: reason, options: options)
    }
  }

  /// Sends `forwarded` (the request, possibly made conditional) and handles the answer: a 304
  /// freshens `stored`, an error may serve it stale, a storable response is stored.
  private func forward(
    _ request: HTTPRequest, as forwarded: HTTPRequest, stored: StoredHTTPResponse?,
    reason: HTTPCacheStatus.Forward, options: TransportOptions
  ) async throws(TransportError) -> HTTPResponse {
    let policy = cache.policy
    let requestTime = cache.now()
    var response: HTTPResponse
    do {
      response = try await base.send(forwarded, options: options)
    } catch {
      guard let stored, error != .cancelled else { throw error }
      if let stale = policy.staleResponse(for: request, stored: stored, afterErrorStatus: nil, now: cache.now()) {
        return stale
      }
      if Self.isUnreachable(error) {
        return policy.gatewayTimeout(date: cache.now())
      }
      throw error
    }
    var responseTime = cache.now()
    let madeConditional = forwarded != request
    if response.status == 304, let stored, madeConditional {
      if let updated = policy.updating(stored, with: response, requestTime: requestTime, responseTime: responseTime) {
        await cache.store(updated, for: request)
        return policy.servedResponse(
          updated, age: policy.currentAge(of: updated, at: responseTime),
          lifetime: policy.freshnessLifetime(of: updated), forward: reason, forwardStatus: 304, stored: true)
      }
      // The 304 is about another representation: ask again without our validators.
      response = try await base.send(request, options: options)
      responseTime = cache.now()
    }
    if let stored, HTTPCachePolicy.errorStatuses.contains(response.status),
      let stale = policy.staleResponse(
        for: request, stored: stored, afterErrorStatus: response.status, now: responseTime)
    {
      return stale
    }
    var isStored = false
    if let newStored = policy.storedResponse(
      response, for: request, requestTime: requestTime, responseTime: responseTime)
    {
      await cache.store(newStored, for: request)
      isStored = true
    }
    return Self.tagged(
      response, status: HTTPCacheStatus(forward: reason, forwardStatus: response.status, stored: isStored))
  }

  private static func tagged(_ response: HTTPResponse, status: HTTPCacheStatus) -> HTTPResponse {
    var response = response
    response.headers.add(status.description, for: "Cache-Status")
    return response
  }

  /// Whether `error` means the origin could not be reached (so a cache that must not serve its
  /// stale response generates a 504).
  private static func isUnreachable(_ error: TransportError) -> Bool {
    switch error {
    case .connectionRefused, .connectionLost, .timedOut, .cannotFindHost, .secureConnectionFailed: true
    default: false
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
