import _KilnSynchronization

/// One exchange with an ``HTTPCache``: RFC 9111's decisions, run by both
/// ``CachingTransport`` and the ``HTTPCaching`` stage over whatever sends to the origin.
struct CacheExchange: Sendable {
  typealias Send = @Sendable (HTTPRequest) async throws(NetworkError) -> HTTPResponse

  let cache: HTTPCache

  /// Answers `request` from the cache where RFC 9111 allows, sending to the origin with
  /// `send` otherwise, and revalidations in the background with `sendInBackground`.
  ///
  /// - Throws: What `send` threw, when no stored response may stand in.
  func respond(to request: HTTPRequest, send: Send, sendInBackground: @escaping Send) async throws(NetworkError)
    -> HTTPResponse
  {
    let policy = cache.policy
    let counters = cache.counters
    guard request.method == .get else {
      counters.add(.bypassed)
      let response = try await send(request)
      for url in policy.invalidatedURLs(for: request, response: response) {
        await cache.invalidate(url)
      }
      return Self.tagged(response, status: HTTPCacheStatus(forward: .method, forwardStatus: response.status))
    }
    let variants = await cache.storedResponses(for: request.url)
    let stored = variants.first { $0.matchesVary(of: request) }
    switch policy.decision(for: request, stored: stored ?? variants.first, now: cache.now()) {
    case .serve(let response):
      counters.add(.hits)
      return response
    case .generate(let response):
      counters.add(.generated)
      return response
    case .serveStale(let response, let revalidation):
      counters.add(.staleHits)
      if let stored {
        let exchange = self
        cache.revalidateInBackground(key: HTTPCache.key(for: request.url)) {
          _ = try? await exchange.forward(
            request, as: revalidation, stored: stored, reason: .stale, send: sendInBackground)
        }
      }
      return response
    case .forward(let forwarded, let reason):
      switch reason {
      case .stale: counters.add(.expired)
      case .request: counters.add(.requestForwards)
      case .bypass, .method: counters.add(.bypassed)
      case .uriMiss, .varyMiss, .miss: counters.add(.misses)
      }
      return try await forward(request, as: forwarded, stored: stored, reason: reason, send: send)
    }
  }

  /// Sends `forwarded` (the request, possibly made conditional) and handles the answer: a 304
  /// freshens `stored`, an error may serve it stale, a storable response is stored.
  private func forward(
    _ request: HTTPRequest, as forwarded: HTTPRequest, stored: StoredHTTPResponse?,
    reason: HTTPCacheStatus.Forward, send: Send
  ) async throws(NetworkError) -> HTTPResponse {
    let policy = cache.policy
    let requestTime = cache.now()
    let counters = cache.counters
    let madeConditional = forwarded != request
    var response: HTTPResponse
    do {
      response = try await send(forwarded)
    } catch {
      if madeConditional, !error.isCancellation { counters.add(.revalidationFailures) }
      guard let stored, !error.isCancellation else { throw error }
      if let stale = policy.staleResponse(for: request, stored: stored, afterErrorStatus: nil, now: cache.now()) {
        counters.add(.staleIfError)
        return stale
      }
      if Self.isUnreachable(error) {
        return policy.gatewayTimeout(date: cache.now())
      }
      throw error
    }
    var responseTime = cache.now()
    if madeConditional {
      // An error status is no new representation: the revalidation failed (and the stored
      // response may still be served, stale-if-error).
      let outcome: HTTPCacheCounter =
        response.status == 304
        ? .revalidatedNotModified
        : HTTPCachePolicy.errorStatuses.contains(response.status) ? .revalidationFailures : .revalidatedReplaced
      counters.add(outcome)
    }
    if response.status == 304, let stored, madeConditional {
      if let updated = policy.updating(stored, with: response, requestTime: requestTime, responseTime: responseTime) {
        await cache.store(updated, for: request)
        return policy.servedResponse(
          updated, age: policy.currentAge(of: updated, at: responseTime),
          lifetime: policy.freshnessLifetime(of: updated), forward: reason, forwardStatus: 304, stored: true)
      }
      // The 304 is about another representation: ask again without our validators.
      response = try await send(request)
      responseTime = cache.now()
    }
    if let stored, HTTPCachePolicy.errorStatuses.contains(response.status),
      let stale = policy.staleResponse(
        for: request, stored: stored, afterErrorStatus: response.status, now: responseTime)
    {
      counters.add(.staleIfError)
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
  /// stale response generates a 504): a refused, lost or secure connection that failed, an
  /// unknown host, or a timeout (the transport's or the pipeline's).
  private static func isUnreachable(_ error: NetworkError) -> Bool {
    switch error {
    case .transport(.connectionRefused), .transport(.connectionLost), .transport(.timedOut),
      .transport(.cannotFindHost), .transport(.secureConnectionFailed), .timedOut:
      true
    default: false
    }
  }
}
