import _KilnSynchronization

/// One exchange with an ``HTTPCache``: RFC 9111's decisions, run by both
/// ``CachingTransport`` and the ``HTTPCaching`` stage over whatever sends to the origin.
struct CacheExchange: Sendable {
  typealias Send = @Sendable (HTTPRequest) async throws(NetworkError) -> HTTPResponse

  let cache: HTTPCache

  /// What the cache holds for a `GET`: the stored response selected for it, and the policy's
  /// decision; `nil` for the decision when the selected response is the start of a
  /// representation (a `206`) that a request for all of it completes.
  struct Lookup {
    let stored: StoredHTTPResponse?
    let decision: HTTPCacheDecision?
  }

  /// `request` looked up without suspending; `nil` for a request other than a `GET`, or a
  /// store that is read only asynchronously.
  ///
  /// Callers look up first and answer a fresh hit (``hit(_:)``) with no asynchronous call and
  /// no closure over the next transport; anything else goes to
  /// ``respond(to:lookup:send:sendInBackground:)`` with the lookup, which acts on it without
  /// reading or deciding again.
  func lookUpNow(_ request: HTTPRequest) -> Lookup? {
    guard request.method == .get, let variants = cache.storedResponsesInMemory(for: request.url) else { return nil }
    return lookUp(request, in: variants)
  }

  /// `lookup`'s response when the cache serves it as it is (a fresh hit), counted as a hit.
  func hit(_ lookup: Lookup?) -> HTTPResponse? {
    guard let decision = lookup?.decision, case .serve(let response) = decision else { return nil }
    cache.counters.add(.hits)
    return response
  }

  /// Answers `request` from the cache where RFC 9111 allows, sending to the origin with
  /// `send` otherwise, and revalidations in the background with `sendInBackground`.
  ///
  /// - Parameter lookup: What ``lookUpNow(_:)`` found for `request`, if the caller looked up
  ///   already; `nil` to read the store here.
  /// - Throws: What `send` threw, when no stored response may stand in.
  func respond(
    to request: HTTPRequest, lookup: Lookup? = nil, send: Send, sendInBackground: @escaping Send
  ) async throws(NetworkError) -> HTTPResponse {
    let policy = cache.policy
    let counters = cache.counters
    guard request.method == .get else {
      counters.add(.bypassed)
      let requestTime = cache.now()
      let response = try await send(request)
      for url in policy.invalidatedURLs(for: request, response: response) {
        await cache.invalidate(url)
      }
      // A POST answered with its own URL's representation answers later GETs of that URL.
      var isStored = false
      if let (stored, get) = policy.storedResponse(
        forLaterGETs: response, to: request, requestTime: requestTime, responseTime: cache.now())
      {
        await cache.store(stored, for: get)
        isStored = true
      }
      return Self.tagged(
        response, status: HTTPCacheStatus(forward: .method, forwardStatus: response.status, stored: isStored))
    }
    let found: Lookup
    if let lookup {
      found = lookup
    } else {
      found = lookUp(request, in: await cache.storedResponses(for: request.url))
    }
    let stored = found.stored
    guard let decision = found.decision else {
      counters.add(.misses)
      return try await completing(request, partial: stored!, send: send)
    }
    switch decision {
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
        let key = HTTPCache.key(for: request.url)
        cache.revalidateInBackground(key: key) {
          // Over a store other processes share, one of them revalidates: a process that finds
          // the key's lease held leaves it to the holder.
          var lease: StoreLease?
          if let leasing = exchange.cache.leasing, let collapsing = exchange.cache.collapsing {
            do {
              guard let taken = try await leasing.takeLease(on: key, for: collapsing.lease) else { return }
              lease = taken
            } catch {}
            // Another process may have revalidated it just now.
            if let lease, await exchange.isFresh(request) {
              await leasing.giveBack(lease)
              return
            }
          }
          _ = try? await exchange.forward(
            request, as: revalidation, stored: stored, reason: .stale, send: sendInBackground)
          if let lease { await exchange.cache.leasing?.giveBack(lease) }
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
      if let leasing = cache.leasing, let collapsing = cache.collapsing, collapses(request, reason, stored: stored) {
        return try await forwardCollapsed(
          request, as: forwarded, stored: stored, reason: reason, send: send, leasing: leasing, collapsing)
      }
      return try await forward(request, as: forwarded, stored: stored, reason: reason, send: send)
    }
  }

  /// What the cache holds for the `GET` `request`, given the variants stored for its URL.
  private func lookUp(_ request: HTTPRequest, in variants: [StoredHTTPResponse]) -> Lookup {
    let stored = StoredHTTPResponse.selected(variants, for: request)
    if let stored, stored.response.status == 206, !request.headers.contains("Range"),
      !CacheControl(request.headers).onlyIfCached
    {
      return Lookup(stored: stored, decision: nil)
    }
    return Lookup(
      stored: stored, decision: cache.policy.decision(for: request, stored: stored ?? variants.first, now: cache.now()))
  }

  /// Answers `request`, for a whole representation, when the store holds only its start
  /// (`partial`, a `206`): asks the origin for the rest under `If-Range` with the partial's
  /// validator and combines the two into the `200` it stores and answers (RFC 9111 §3.4). The
  /// origin's `200` (the representation changed, or it ignores ranges) is used as it is; a rest
  /// that cannot be combined, or a partial without a validator, means asking for all of it.
  private func completing(
    _ request: HTTPRequest, partial: StoredHTTPResponse, send: Send
  ) async throws(NetworkError) -> HTTPResponse {
    // If-Range takes a strong validator only (RFC 9110 §13.1.5).
    guard let validator = HTTPCachePolicy.strongValidator(of: partial.response),
      let (held, length) = HTTPCachePolicy.contentRange(of: partial.response),
      held.lowerBound == 0, held.upperBound < length
    else {
      return try await forward(request, as: request, stored: nil, reason: .uriMiss, send: send)
    }
    let stored = partial.response
    return try await forward(request, as: request, stored: nil, reason: .uriMiss) {
      (whole: HTTPRequest) async throws(NetworkError) -> HTTPResponse in
      var rest = whole
      rest.headers.set("bytes=\(held.upperBound)-", for: "Range")
      rest.headers.set(validator, for: "If-Range")
      let response = try await send(rest)
      guard response.status == 206 || response.status == 416 else { return response }
      if let combined = HTTPCachePolicy.combining(stored, with: response) { return combined }
      return try await send(whole)
    }
  }

  /// Whether `request`, forwarded for `reason`, waits for another process's: misses and stale
  /// responses do, unless
  /// - the request refuses a stored response however new (`no-cache`, `max-age=0`,
  ///   `Pragma: no-cache`): only its own exchange with the origin answers it;
  /// - the stored response must be validated on every use (`no-cache`, or no freshness at all):
  ///   another process's revalidation would not make it servable;
  /// - the last response this process got for the key under the lease could not be served from
  ///   the store (not stored, or stored stale): waiting would only queue the processes.
  private func collapses(_ request: HTTPRequest, _ reason: HTTPCacheStatus.Forward, stored: StoredHTTPResponse?)
    -> Bool
  {
    switch reason {
    case .uriMiss, .varyMiss, .miss, .stale:
      let directives = CacheControl(request.headers)
      if directives.noCache || directives.maxAge == 0 { return false }
      if directives.isEmpty && request.headers.listElements(for: "Pragma").contains("no-cache") { return false }
      if reason == .stale, let stored {
        let policy = cache.policy
        if policy.directives(of: stored).directives.noCache || policy.freshnessLifetime(of: stored) <= 0 {
          return false
        }
      }
      return !cache.passes(HTTPCache.key(for: request.url))
    case .request, .bypass, .method:
      return false
    }
  }

  /// Forwards `request` as the one process (of those sharing the store) that asks the origin
  /// for its key now, holding the key's lease; or, while another process holds it, waits for the
  /// response that process stores (see ``RequestCollapsing``).
  private func forwardCollapsed(
    _ request: HTTPRequest, as forwarded: HTTPRequest, stored: StoredHTTPResponse?,
    reason: HTTPCacheStatus.Forward, send: Send, leasing: any LeasingStore<String>, _ collapsing: RequestCollapsing
  ) async throws(NetworkError) -> HTTPResponse {
    let key = HTTPCache.key(for: request.url)
    let counters = cache.counters
    let elapsed = ElapsedClock(collapsing.clock)
    var waited = false
    while true {
      let lease: StoreLease?
      do {
        lease = try await leasing.takeLease(on: key, for: collapsing.lease)
      } catch {
        if Task.isCancelled { throw .cancelled }
        // The store cannot be reached: ask as if it offered no lease.
        return try await forward(request, as: forwarded, stored: stored, reason: reason, send: send)
      }
      if let lease {
        do {
          let response = try await forwardHolding(
            request, as: forwarded, stored: stored, reason: reason, send: send, afterWaiting: waited)
          await leasing.giveBack(lease)
          // A response the others cannot take from the store: this process stops waiting for
          // the key for a lease's time.
          if let status = response.cacheStatus, !status.collapsed, !status.stored || (status.ttl ?? 1) <= 0 {
            cache.pass(key, for: collapsing.lease)
          }
          return response
        } catch {
          await leasing.giveBack(lease)
          throw error
        }
      }
      // Another process holds the key: wait for the response it stores.
      guard elapsed.elapsed() < collapsing.waitTimeout else {
        counters.add(.collapseWaitTimeouts)
        return try await forward(request, as: forwarded, stored: stored, reason: reason, send: send)
      }
      waited = true
      do {
        try await collapsing.clock.sleep(for: collapsing.pollInterval)
      } catch {
        throw .cancelled
      }
      if let response = await collapsedResponse(to: request, reason: reason) {
        counters.add(.collapsedResponses)
        return response
      }
    }
  }

  /// Forwards `request` while holding its key's lease. Another process may have stored (or
  /// freshened) a response since this one read the store, while it waited or in the moment
  /// between its read and the lease, when the other process gave the lease back: the request is
  /// decided again first, so that the origin is asked once per key.
  private func forwardHolding(
    _ request: HTTPRequest, as forwarded: HTTPRequest, stored: StoredHTTPResponse?,
    reason: HTTPCacheStatus.Forward, send: Send, afterWaiting waited: Bool
  ) async throws(NetworkError) -> HTTPResponse {
    let variants = await cache.storedResponses(for: request.url)
    // Nothing to read now (the entry is gone, or the store failed): as decided before.
    guard !variants.isEmpty else {
      if waited { cache.counters.add(.collapseTakeovers) }
      return try await forward(request, as: forwarded, stored: stored, reason: reason, send: send)
    }
    let current = StoredHTTPResponse.selected(variants, for: request)
    switch cache.policy.decision(for: request, stored: current ?? variants.first, now: cache.now()) {
    case .serve(let response):
      cache.counters.add(.collapsedResponses)
      return Self.markedCollapsed(response, reason: reason, originStatus: current?.response.status)
    case .forward(let again, let newReason):
      if waited { cache.counters.add(.collapseTakeovers) }
      return try await forward(request, as: again, stored: current, reason: newReason, send: send)
    case .generate, .serveStale:
      if waited { cache.counters.add(.collapseTakeovers) }
      return try await forward(request, as: forwarded, stored: stored, reason: reason, send: send)
    }
  }

  /// The response the cache may now serve `request` from the store without asking the origin
  /// (another process may have stored or freshened it), with the stored response it comes from.
  private func servable(_ request: HTTPRequest) async -> (response: HTTPResponse, stored: StoredHTTPResponse)? {
    let variants = await cache.storedResponses(for: request.url)
    guard let current = StoredHTTPResponse.selected(variants, for: request),
      case .serve(let response) = cache.policy.decision(for: request, stored: current, now: cache.now())
    else { return nil }
    return (response, current)
  }

  /// Whether the cache may now serve `request` a stored response without asking the origin.
  private func isFresh(_ request: HTTPRequest) async -> Bool {
    await servable(request) != nil
  }

  /// The response another process stored for `request`, if the cache may now serve it fresh,
  /// its `Cache-Status` marked `collapsed`.
  private func collapsedResponse(to request: HTTPRequest, reason: HTTPCacheStatus.Forward) async -> HTTPResponse? {
    guard let (response, stored) = await servable(request) else { return nil }
    return Self.markedCollapsed(response, reason: reason, originStatus: stored.response.status)
  }

  /// `response`, served from the cache, with its `Cache-Status` member saying it answered a
  /// forwarded request collapsed into another process's (RFC 9211 §2.6):
  /// `Kiln; fwd=uri-miss; fwd-status=200; ttl=60; collapsed`.
  ///
  /// `originStatus` is the status the origin answered the other process with (the stored
  /// response's), which the served one differs from when it answers the request's own
  /// preconditions with a 304.
  private static func markedCollapsed(
    _ response: HTTPResponse, reason: HTTPCacheStatus.Forward, originStatus: Int?
  ) -> HTTPResponse {
    var response = response
    var members = response.headers.values(for: "Cache-Status")
    var status = members.last.flatMap(HTTPCacheStatus.init(member:)) ?? HTTPCacheStatus()
    status.hit = false
    status.forward = reason
    status.forwardStatus = originStatus ?? response.status
    status.collapsed = true
    if members.isEmpty { members.append(status.description) } else { members[members.count - 1] = status.description }
    response.headers.remove("Cache-Status")
    for member in members { response.headers.add(member, for: "Cache-Status") }
    return response
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
    // Part of a representation is never served in place of what the origin failed to send.
    let fallback = stored?.response.status == 206 ? nil : stored
    var response: HTTPResponse
    do {
      response = try await send(forwarded)
    } catch {
      if madeConditional, !error.isCancellation { counters.add(.revalidationFailures) }
      guard let stored = fallback, !error.isCancellation else { throw error }
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
    if response.status == 304, let stored = fallback, madeConditional {
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
    if let stored = fallback, HTTPCachePolicy.errorStatuses.contains(response.status),
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
      isStored = await cache.storeUnlessPartialOverWhole(newStored, for: request)
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
