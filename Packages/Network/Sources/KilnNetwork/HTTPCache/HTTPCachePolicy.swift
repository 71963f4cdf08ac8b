public import Foundation

/// The decisions of an HTTP cache (RFC 9111, with RFC 5861's `stale-while-revalidate` and
/// `stale-if-error`) as pure functions of a request, a stored response and the time: no I/O,
/// no clock of its own, no state.
///
/// ``HTTPCache`` and ``CachingTransport`` apply it; it can also be used alone, and every
/// decision is testable with explicit dates:
///
/// ```swift
/// let policy = HTTPCachePolicy()               // a private cache
/// guard let stored = policy.storedResponse(response, for: request, requestTime: sent, responseTime: received)
/// else { return }                              // not storable
/// switch policy.decision(for: request, stored: stored, now: .now) {
/// case .serve(let cached): print(cached.headers["Age"]!)     // fresh: no request needed
/// case .forward(let conditional, _): print(conditional.headers["If-None-Match"] ?? "")
/// default: break
/// }
/// ```
///
/// ## Private and shared caches
///
/// A private cache (the default, ``private``) serves one user: it stores `private` responses
/// and responses to requests with `Authorization`. A shared cache (``shared``) does not store
/// `private` responses, stores responses to requests with `Authorization` only when they are
/// `public`, `must-revalidate` or carry `s-maxage`, and prefers `s-maxage` over `max-age`
/// (and then never serves the response stale, like `proxy-revalidate`).
public struct HTTPCachePolicy: Sendable, Hashable {
  /// Whether the cache is shared between users (RFC 9111 §1: a proxy or a CDN) rather than
  /// private to one.
  public var isShared: Bool
  /// The fraction of the time since `Last-Modified` used as heuristic freshness lifetime
  /// (RFC 9111 §4.2.2); 10 % by default.
  public var heuristicFraction: Double
  /// The longest heuristic freshness lifetime in seconds; `nil` (the default) for no limit.
  public var maximumHeuristicLifetime: TimeInterval?
  /// Whether a stale response may be served when the origin cannot be reached at all, beyond
  /// any `stale-if-error` window, as RFC 9111 §4.2.4 allows a disconnected cache; never when the
  /// response forbids it (`must-revalidate`, `no-cache`, ...) or the request asks for a
  /// validated or younger response (`no-cache`, `max-age`, `min-fresh`). `true` by default.
  public var servesStaleWhenDisconnected: Bool
  /// The targeted cache-control fields (RFC 9213) a shared cache obeys, highest precedence
  /// first: the first one a response carries with a valid, non-empty value replaces its
  /// `Cache-Control` and `Expires` in every decision of the cache (storing, freshness,
  /// serving stale). `["CDN-Cache-Control"]` by default; put a field of your own first to
  /// address a gateway apart from the CDNs in front of it. A private cache ignores them.
  ///
  /// ```swift
  /// var policy = HTTPCachePolicy.shared
  /// policy.targetedFields = ["Gateway-Cache-Control", "CDN-Cache-Control"]
  /// ```
  public var targetedFields: [String] = ["CDN-Cache-Control"]

  /// Creates a policy.
  ///
  /// - Parameters:
  ///   - isShared: Whether the cache is shared; `false` (a private cache) by default.
  ///   - heuristicFraction: The fraction of the time since `Last-Modified` used as heuristic
  ///     freshness lifetime; `0.1` by default, `0` to turn heuristic freshness off.
  ///   - maximumHeuristicLifetime: The longest heuristic lifetime in seconds; none by default.
  ///   - servesStaleWhenDisconnected: Whether a stale response may be served when the origin
  ///     cannot be reached, beyond `stale-if-error`; `true` by default.
  public init(
    isShared: Bool = false, heuristicFraction: Double = 0.1, maximumHeuristicLifetime: TimeInterval? = nil,
    servesStaleWhenDisconnected: Bool = true
  ) {
    self.isShared = isShared
    self.heuristicFraction = heuristicFraction
    self.maximumHeuristicLifetime = maximumHeuristicLifetime
    self.servesStaleWhenDisconnected = servesStaleWhenDisconnected
  }

  /// The policy of a private cache, which serves one user.
  public static let `private` = HTTPCachePolicy()

  /// The policy of a shared cache, which serves many users.
  public static let shared = HTTPCachePolicy(isShared: true)

  /// The statuses that may get heuristic freshness (RFC 9110 §15.1).
  public static let heuristicallyCacheableStatuses: Set<Int> = [
    200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501,
  ]

  /// The statuses whose caching rules this cache implements, for `must-understand`
  /// (RFC 9111 §5.2.2.3).
  public static let understoodStatuses: Set<Int> = [
    200, 203, 204, 300, 301, 302, 303, 307, 308, 400, 403, 404, 405, 410, 414, 500, 501, 502, 503, 504,
  ]

  /// The statuses on which `stale-if-error` lets a stale response be served (RFC 5861 §4).
  public static let errorStatuses: Set<Int> = [500, 502, 503, 504]

  // MARK: - Targeted fields (RFC 9213)

  /// The directives this cache obeys in a response with `headers`: its first targeted field
  /// (``targetedFields``) with a valid, non-empty value in a shared cache, else its
  /// `Cache-Control`; `targeted` says which (a targeted field replaces `Expires` too).
  func responseDirectives(of headers: HTTPHeaders) -> (directives: CacheControl, targeted: Bool) {
    if isShared {
      for name in targetedFields {
        let values = headers.values(for: name)
        if !values.isEmpty, let directives = CacheControl(targeted: values) { return (directives, true) }
      }
    }
    return (CacheControl(headers), false)
  }

  /// ``responseDirectives(of:)`` for a stored response, from what it parsed when stored.
  func directives(of stored: StoredHTTPResponse) -> (directives: CacheControl, targeted: Bool) {
    if isShared {
      for name in targetedFields {
        if StoredHTTPResponse.isTargetedCacheControlName(name) {
          // Parsed when the response was stored; compared without allocating, as this runs
          // on every decision of a shared cache.
          if let found = stored.targetedCacheControls.first(where: { HTTPHeaders.namesEqual($0.name, name) }) {
            return (found.directives, true)
          }
        } else {
          // A field named otherwise (`Surrogate-Control`) is parsed here, as it was to store.
          let values = stored.response.headers.values(for: name)
          if !values.isEmpty, let directives = CacheControl(targeted: values) { return (directives, true) }
        }
      }
    }
    return (stored.cacheControl, false)
  }

  // MARK: - Storing (RFC 9111 §3)

  /// Whether `response` to `request` may be stored (RFC 9111 §3).
  ///
  /// It may when the request is a `GET`, the status is final (not 304) — a `206` only as the
  /// answer to a `Range` request, holding one byte range of a representation whose length its
  /// `Content-Range` states (RFC 9111 §3.3), and nothing else for a `Range` request —
  /// neither side says `no-store` (unless `must-understand` with an understood status), a shared
  /// cache sees neither `private` nor an unpermitted `Authorization`, the response does not vary
  /// on `*`, and the response carries something that makes it cacheable: `public`, `private`
  /// (private cache), `Expires`, `max-age`, `s-maxage` (shared cache) or a heuristically
  /// cacheable status.
  public func canStore(_ response: HTTPResponse, for request: HTTPRequest) -> Bool {
    guard request.method == .get else { return false }
    let status = response.status
    if status == 206 || request.headers.contains("Range") {
      guard status == 206, request.headers.contains("Range"), Self.contentRange(of: response) != nil else {
        return false
      }
    }
    guard status >= 200, status != 304 else { return false }
    let requestDirectives = CacheControl(request.headers)
    let (directives, targeted) = responseDirectives(of: response.headers)
    if requestDirectives.noStore { return false }
    if directives.mustUnderstand {
      guard Self.understoodStatuses.contains(status) else { return false }
    } else if directives.noStore {
      return false
    }
    if isShared {
      if directives.isPrivate { return false }
      if request.headers.contains("Authorization"),
        !(directives.isPublic || directives.mustRevalidate || directives.sharedMaxAge != nil)
      {
        return false
      }
    }
    if response.headers.listElements(for: "Vary").contains("*") { return false }
    let isPrivate = directives.isPrivate || !directives.privateFields.isEmpty
    return directives.isPublic || (isPrivate && !isShared) || (!targeted && response.headers.contains("Expires"))
      || directives.maxAge != nil || (isShared && directives.sharedMaxAge != nil)
      || Self.heuristicallyCacheableStatuses.contains(status)
  }

  /// The stored form of `response`, or `nil` when it may not be stored (``canStore(_:for:)``).
  ///
  /// Hop-by-hop fields (`Connection` and the fields it names, `Keep-Alive`, `Proxy-Connection`,
  /// `TE`, `Transfer-Encoding`, `Upgrade`) and the proxy's own fields (`Proxy-Authenticate`,
  /// `Proxy-Authentication-Info`, `Proxy-Authorization`) are not stored (RFC 9111 §3.1), nor the fields named
  /// by a qualified `no-cache="..."` (or, in a shared cache, `private="..."`).
  ///
  /// - Parameters:
  ///   - response: The response received.
  ///   - request: The request that produced it.
  ///   - requestTime: When the request was sent.
  ///   - responseTime: When the response was received.
  public func storedResponse(
    _ response: HTTPResponse, for request: HTTPRequest, requestTime: Date, responseTime: Date
  ) -> StoredHTTPResponse? {
    guard canStore(response, for: request) else { return nil }
    var stored = response
    stored.headers = Self.removingHopByHopFields(response.headers)
    // Qualified `no-cache="..."` (and, in a shared cache, `private="..."`) name fields that may
    // not be reused without validation: they are not stored, so the rest can be.
    let directives = responseDirectives(of: response.headers).directives
    for name in directives.noCacheFields + (isShared ? directives.privateFields : []) {
      stored.headers.remove(name)
    }
    if stored.url == nil { stored.url = request.url }
    return StoredHTTPResponse(response: stored, requestTime: requestTime, responseTime: responseTime, request: request)
  }

  // MARK: - Freshness (RFC 9111 §4.2)

  /// How long `stored` is fresh after it was generated, in seconds (RFC 9111 §4.2.1): `s-maxage`
  /// (shared cache), else `max-age`, else `Expires` minus `Date`, else heuristic freshness:
  /// ``heuristicFraction`` of the time between `Last-Modified` and `Date` for heuristically
  /// cacheable statuses or `public` responses; else `0`.
  public func freshnessLifetime(of stored: StoredHTTPResponse) -> TimeInterval {
    freshnessLifetime(of: stored, directives(of: stored))
  }

  /// ``freshnessLifetime(of:)`` with the directives this cache obeys for `stored`, resolved
  /// once by a caller that reads them again (``decision(for:stored:now:)``).
  func freshnessLifetime(
    of stored: StoredHTTPResponse, _ resolved: (directives: CacheControl, targeted: Bool)
  ) -> TimeInterval {
    let (directives, targeted) = resolved
    if isShared, let sharedMaxAge = directives.sharedMaxAge { return TimeInterval(sharedMaxAge) }
    if let maxAge = directives.maxAge { return TimeInterval(maxAge) }
    if !targeted, let expires = stored.expires { return max(0, expires.timeIntervalSince(stored.dateValue)) }
    guard heuristicFraction > 0, let lastModified = stored.lastModified,
      directives.isPublic || Self.heuristicallyCacheableStatuses.contains(stored.response.status)
    else { return 0 }
    let lifetime = max(0, stored.dateValue.timeIntervalSince(lastModified) * heuristicFraction)
    return maximumHeuristicLifetime.map { min($0, lifetime) } ?? lifetime
  }

  /// The age of `stored` at `now` in seconds (RFC 9111 §4.2.3): the corrected initial age (from
  /// `Age`, `Date` and the request's round trip) plus the time it has been stored.
  public func currentAge(of stored: StoredHTTPResponse, at now: Date) -> TimeInterval {
    let apparentAge = max(0, stored.responseTime.timeIntervalSince(stored.dateValue))
    let responseDelay = max(0, stored.responseTime.timeIntervalSince(stored.requestTime))
    let correctedAgeValue = TimeInterval(stored.ageValue) + responseDelay
    let correctedInitialAge = max(apparentAge, correctedAgeValue)
    let residentTime = max(0, now.timeIntervalSince(stored.responseTime))
    return correctedInitialAge + residentTime
  }

  /// Whether `stored` is fresh at `now`: its lifetime exceeds its age.
  public func isFresh(_ stored: StoredHTTPResponse, at now: Date) -> Bool {
    freshnessLifetime(of: stored) > currentAge(of: stored, at: now)
  }

  /// Whether `stored` may never be served stale: `must-revalidate` or `no-cache`, and in a shared
  /// cache `proxy-revalidate` or `s-maxage` (RFC 9111 §5.2.2).
  public func forbidsStale(_ stored: StoredHTTPResponse) -> Bool {
    forbidsStale(by: directives(of: stored).directives)
  }

  /// Whether `directives`, those this cache obeys for a stored response, forbid serving it
  /// stale (``forbidsStale(_:)``).
  func forbidsStale(by directives: CacheControl) -> Bool {
    directives.mustRevalidate || directives.noCache
      || (isShared && (directives.proxyRevalidate || directives.sharedMaxAge != nil))
  }

  // MARK: - Serving (RFC 9111 §4)

  /// What to do with `request` given the stored response selected for it (RFC 9111 §4,
  /// RFC 5861 §3).
  ///
  /// - Not a `GET`: forward it.
  /// - A `Range` request: serve one satisfiable byte range as a `206` from a stored complete
  ///   response that could be served to the request without `Range`; forward it otherwise.
  /// - Nothing stored, or the stored response's `Vary` fields differ: forward it, or generate a
  ///   504 for `only-if-cached`.
  /// - The response says `no-cache`, or the request says `no-cache` (or `Pragma: no-cache`
  ///   without `Cache-Control`), or the request's `max-age`/`min-fresh` are not met: forward a
  ///   conditional request.
  /// - Fresh: serve it, with `Age` set.
  /// - Stale, but within the request's `max-stale` and not `must-revalidate`: serve it.
  /// - Stale, but within `stale-while-revalidate` and not `must-revalidate`: serve it and
  ///   revalidate in the background.
  /// - Otherwise forward a conditional request (or generate a 504 for `only-if-cached`).
  ///
  /// - Parameters:
  ///   - request: The request to answer.
  ///   - stored: The stored response selected for it, or `nil`.
  ///   - now: The current time.
  /// - Returns: The decision.
  public func decision(for request: HTTPRequest, stored: StoredHTTPResponse?, now: Date) -> HTTPCacheDecision {
    guard request.method == .get else { return .forward(request, reason: .method) }
    guard !request.headers.contains("Range") else { return rangeDecision(for: request, stored: stored, now: now) }
    // Part of a representation never answers a request for all of it.
    guard stored?.response.status != 206 else {
      return CacheControl(request.headers).onlyIfCached
        ? .generate(gatewayTimeout(date: now)) : .forward(request, reason: .uriMiss)
    }
    return wholeDecision(for: request, stored: stored, now: now)
  }

  /// ``decision(for:stored:now:)`` for a `GET` without `Range`, whatever `stored`'s status.
  func wholeDecision(for request: HTTPRequest, stored: StoredHTTPResponse?, now: Date) -> HTTPCacheDecision {
    let requestDirectives = CacheControl(request.headers)
    guard let stored else {
      return requestDirectives.onlyIfCached
        ? .generate(gatewayTimeout(date: now)) : .forward(request, reason: .uriMiss)
    }
    guard stored.matchesVary(of: request, selectingLanguage: true) else {
      return requestDirectives.onlyIfCached
        ? .generate(gatewayTimeout(date: now)) : .forward(request, reason: .varyMiss)
    }
    // Resolved once: the lifetime, the directives read below and the stale rule share them.
    let resolved = self.directives(of: stored)
    let directives = resolved.directives
    let lifetime = freshnessLifetime(of: stored, resolved)
    let age = currentAge(of: stored, at: now)
    let reason: HTTPCacheStatus.Forward
    if directives.noCache {
      reason = .stale
    } else if requestDirectives.noCache
      || (requestDirectives.isEmpty && request.headers.listElements(for: "Pragma").contains { $0 == "no-cache" })
    {
      reason = .request
    } else if let maxAge = requestDirectives.maxAge, age > TimeInterval(maxAge),
      // A fresh `immutable` response is not revalidated for a reload (`max-age=0`, RFC 8246
      // §2); a `no-cache` request (a forced reload) or another `max-age` still is.
      !(directives.immutable && maxAge == 0 && age < lifetime)
    {
      reason = .request
    } else if let minFresh = requestDirectives.minFresh, lifetime - age < TimeInterval(minFresh) {
      reason = .request
    } else if age < lifetime {
      return .serve(answeringPreconditions(of: request, with: servedResponse(stored, age: age, lifetime: lifetime)))
    } else if forbidsStale(by: directives) {
      reason = .stale
    } else if let maxStale = requestDirectives.maxStale, age - lifetime <= TimeInterval(maxStale) {
      return .serve(answeringPreconditions(of: request, with: servedResponse(stored, age: age, lifetime: lifetime)))
    } else if let window = directives.staleWhileRevalidate, age - lifetime <= TimeInterval(window),
      !requestDirectives.onlyIfCached
    {
      let response = servedResponse(stored, age: age, lifetime: lifetime, detail: "stale-while-revalidate")
      return .serveStale(response, revalidation: conditionalRequest(for: request, revalidating: stored))
    } else {
      reason = .stale
    }
    if requestDirectives.onlyIfCached { return .generate(gatewayTimeout(date: now)) }
    return .forward(conditionalRequest(for: request, revalidating: stored), reason: reason)
  }

  /// A `Range` request answered from `stored` (RFC 9110 §14.2, RFC 9111 §3.3–3.4): when `stored`
  /// would be served as it is to the request without `Range`, and the request asks for one
  /// satisfiable byte range without `If-Range` that `stored` holds (all of a complete `200`, or
  /// the part a stored `206` holds), that range as a `206` with `Content-Range`; else the
  /// request is forwarded unchanged.
  func rangeDecision(for request: HTTPRequest, stored: StoredHTTPResponse?, now: Date) -> HTTPCacheDecision {
    let bypass = HTTPCacheDecision.forward(request, reason: .bypass)
    guard let stored, !request.headers.contains("If-Range"),
      let rangeValue = request.headers.first("Range"), request.headers.values(for: "Range").count == 1
    else { return bypass }
    // The bytes `stored` holds, of a representation of `length` bytes.
    let held: Range<Int>
    let length: Int
    switch stored.response.status {
    case 200:
      (held, length) = (0..<stored.response.body.count, stored.response.body.count)
    case 206:
      guard let part = Self.contentRange(of: stored.response) else { return bypass }
      (held, length) = part
    default:
      return bypass
    }
    var whole = request
    whole.headers.remove("Range")
    guard case .serve(let served) = wholeDecision(for: whole, stored: stored, now: now),
      served.status == stored.response.status, served.body.count == held.count,
      let range = Self.byteRange(rangeValue, length: length),
      range.lowerBound >= held.lowerBound, range.upperBound <= held.upperBound
    else { return bypass }
    var partial = served
    partial.status = 206
    let start = served.body.startIndex - held.lowerBound
    partial.body = served.body.subdata(in: (start + range.lowerBound)..<(start + range.upperBound))
    partial.headers.set("bytes \(range.lowerBound)-\(range.upperBound - 1)/\(length)", for: "Content-Range")
    if partial.headers.contains("Content-Length") {
      partial.headers.set(String(range.count), for: "Content-Length")
    }
    return .serve(partial)
  }

  /// A byte position or length in `Range` and `Content-Range`: ASCII digits only, at most 18
  /// of them (so that sums of two never overflow).
  static func byteOffset(_ digits: String) -> Int? {
    guard !digits.isEmpty, digits.utf8.count <= 18, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
      return nil
    }
    return Int(digits)
  }

  /// The byte range a `206` response holds and the length of the whole representation, from its
  /// one `Content-Range` (`bytes first-last/length`, RFC 9110 §14.4), when its body is exactly
  /// that range; `nil` for another unit, an unknown length (`*`), several ranges or a mismatch.
  static func contentRange(of response: HTTPResponse) -> (range: Range<Int>, length: Int)? {
    let values = response.headers.values(for: "Content-Range")
    guard values.count == 1 else { return nil }
    let text = HTTPHeaders.trimmingWhitespace(values[0])
    guard text.lowercased().hasPrefix("bytes "), let slash = text.firstIndex(of: "/") else { return nil }
    let span = text[text.index(text.startIndex, offsetBy: 6)..<slash]
    guard let dash = span.firstIndex(of: "-") else { return nil }
    func number(_ digits: Substring) -> Int? { byteOffset(HTTPHeaders.trimmingWhitespace(String(digits))) }
    guard let first = number(span[..<dash]), let last = number(span[span.index(after: dash)...]),
      let length = number(text[text.index(after: slash)...]), first <= last, last < length,
      response.body.count == last - first + 1
    else { return nil }
    return (first..<(last + 1), length)
  }

  /// `response`'s strong validator (RFC 9110 §8.8.1): its `ETag` unless weak, or without an
  /// `ETag` its `Last-Modified` when at least one second before its `Date` (§8.8.2.2), so that
  /// two versions cannot share it; `nil` otherwise.
  static func strongValidator(of response: HTTPResponse) -> String? {
    if let tag = response.headers.first("ETag") { return tag.hasPrefix("W/") ? nil : tag }
    guard let text = response.headers.first("Last-Modified"), let modified = HTTPDate.parse(text),
      let date = response.headers.first("Date").flatMap(HTTPDate.parse), date.timeIntervalSince(modified) >= 1
    else { return nil }
    return text
  }

  /// `stored`, a `206` holding the start of a representation, completed by `rest`, a `206`
  /// holding the remainder, as one `200` (RFC 9111 §3.4), or `nil` when they cannot be combined:
  /// `rest` does not start where `stored` ends or end the representation, or the two do not
  /// share a strong validator (the same strong `ETag`, or, when neither has one, the same
  /// `Last-Modified` at least a second before the stored response's `Date`). The combined response has `rest`'s header fields without `Content-Range`.
  static func combining(_ stored: HTTPResponse, with rest: HTTPResponse) -> HTTPResponse? {
    guard stored.status == 206, rest.status == 206, let (held, length) = contentRange(of: stored),
      held.lowerBound == 0, let (added, restLength) = contentRange(of: rest), restLength == length,
      added.lowerBound == held.upperBound, added.upperBound == length
    else { return nil }
    // The rest carries the stored part's validator in the same field.
    guard let validator = strongValidator(of: stored),
      validator == (rest.headers.first("ETag") ?? rest.headers.first("Last-Modified"))
    else { return nil }
    var combined = rest
    combined.status = 200
    combined.headers.remove("Content-Range")
    combined.body = stored.body + rest.body
    if combined.headers.contains("Content-Length") {
      combined.headers.set(String(length), for: "Content-Length")
    }
    return combined
  }

  /// The bytes one `bytes=` range (RFC 9110 §14.1.2) selects from a representation of `length`
  /// bytes: `first-last`, `first-` or `-suffix`; `nil` for several ranges, another unit, a
  /// malformed range or one that is not satisfiable.
  static func byteRange(_ value: String, length: Int) -> Range<Int>? {
    let text = HTTPHeaders.trimmingWhitespace(value)
    guard text.lowercased().hasPrefix("bytes="), length > 0 else { return nil }
    let spec = HTTPHeaders.trimmingWhitespace(String(text.dropFirst(6)))
    guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return nil }
    let first = String(spec[..<dash])
    let last = String(spec[spec.index(after: dash)...])
    if first.isEmpty {
      guard let suffix = byteOffset(last), suffix > 0 else { return nil }
      return max(0, length - suffix)..<length
    }
    guard let start = byteOffset(first), start < length else { return nil }
    if last.isEmpty { return start..<length }
    guard let end = byteOffset(last), end >= start else { return nil }
    return start..<(min(end, length - 1) + 1)
  }

  /// `stored` as served from the cache at `now`: its `Age` set to the current age in whole
  /// seconds and a `Cache-Status` hit added.
  public func servedResponse(_ stored: StoredHTTPResponse, now: Date) -> HTTPResponse {
    servedResponse(stored, age: currentAge(of: stored, at: now), lifetime: freshnessLifetime(of: stored))
  }

  func servedResponse(
    _ stored: StoredHTTPResponse, age: TimeInterval, lifetime: TimeInterval, detail: String? = nil,
    forward: HTTPCacheStatus.Forward? = nil, forwardStatus: Int? = nil, stored isStored: Bool = false
  ) -> HTTPResponse {
    let limit = TimeInterval(CacheControl.maximumDeltaSeconds)
    let wholeAge = Int(min(age.rounded(.down), limit))
    // Clamped both ways: a stored entry's times are any finite values, and a heuristic
    // lifetime from a response time far in the future exceeds what an `Int` holds.
    let ttl = Int(min(limit, max(-limit, (lifetime - age).rounded(.down))))
    let isPlainHit = forward == nil && forwardStatus == nil && !isStored && detail == nil
    if isPlainHit, let served = stored.servedHit(age: wholeAge, ttl: ttl) { return served }
    var response = stored.response
    response.headers.set(String(wholeAge), for: "Age")
    let status = HTTPCacheStatus(
      hit: forward == nil, forward: forward, forwardStatus: forwardStatus, ttl: ttl, stored: isStored,
      detail: detail)
    response.headers.add(status.description, for: "Cache-Status")
    if isPlainHit { stored.rememberServedHit(response, age: wholeAge, ttl: ttl) }
    return response
  }

  // MARK: - Validation (RFC 9111 §4.3)

  /// `served` turned into a `304 Not Modified` when `request`'s own preconditions say the client
  /// already has it (RFC 9111 §4.3.2): an `If-None-Match` listing the response's entity tag
  /// (weak comparison) or `*`, or else an `If-Modified-Since` no earlier than its
  /// `Last-Modified` (its `Date` when it has none). The 304 keeps the header fields but
  /// `Content-Length`, and no body.
  ///
  /// - Parameters:
  ///   - request: The request being answered from the cache.
  ///   - served: The stored response as it would be served.
  /// - Returns: `served` itself, or the 304.
  public func answeringPreconditions(of request: HTTPRequest, with served: HTTPResponse) -> HTTPResponse {
    guard request.method == .get || request.method == .head, (200...299).contains(served.status) else {
      return served
    }
    let noneMatch = request.headers.listElements(for: "If-None-Match")
    let notModified: Bool
    if !noneMatch.isEmpty {
      guard let tag = served.headers.first("ETag") else { return served }
      notModified = noneMatch.contains { $0 == "*" || Self.weakTag($0) == Self.weakTag(tag) }
    } else if let since = request.headers.first("If-Modified-Since").flatMap(HTTPDate.parse),
      // Without `Last-Modified`, the response's `Date` (RFC 9111 §4.3.2).
      let modified = (served.headers.first("Last-Modified") ?? served.headers.first("Date")).flatMap(HTTPDate.parse)
    {
      notModified = modified <= since
    } else {
      return served
    }
    guard notModified else { return served }
    var response = served
    response.status = 304
    response.body = Data()
    response.headers.remove("Content-Length")
    return response
  }

  /// `request` made conditional on `stored`'s validators: `If-None-Match` with its `ETag` and
  /// `If-Modified-Since` with its `Last-Modified` (RFC 9111 §4.3.1). A request that already
  /// carries its own preconditions keeps them unchanged.
  public func conditionalRequest(for request: HTTPRequest, revalidating stored: StoredHTTPResponse) -> HTTPRequest {
    var conditional = request
    let headers = request.headers
    if headers.contains("If-None-Match") || headers.contains("If-Modified-Since") || headers.contains("If-Match")
      || headers.contains("If-Unmodified-Since")
    {
      return request
    }
    if let entityTag = stored.entityTag {
      conditional.headers.set(entityTag, for: "If-None-Match")
    }
    if stored.lastModified != nil, let lastModified = stored.response.headers.first("Last-Modified") {
      conditional.headers.set(lastModified, for: "If-Modified-Since")
    }
    return conditional
  }

  /// Whether `stored` has a validator (`ETag` or `Last-Modified`), so that a conditional request
  /// can revalidate it.
  public func hasValidators(_ stored: StoredHTTPResponse) -> Bool {
    stored.entityTag != nil || stored.lastModified != nil
  }

  /// `stored` freshened by a `304 Not Modified` (RFC 9111 §4.3.4), or `nil` when the 304 is not
  /// about it (its validators differ).
  ///
  /// The 304 selects `stored` when its strong `ETag` equals the stored one, its weak `ETag`
  /// matches weakly, or, without `ETag`, its `Last-Modified` equals the stored one or it has no
  /// validator at all. The stored header fields are then replaced by the 304's (RFC 9111 §3.2),
  /// except `Content-Length` and hop-by-hop fields; the exchange times become the 304's.
  ///
  /// - Parameters:
  ///   - stored: The stored response that was revalidated.
  ///   - notModified: The 304 response.
  ///   - requestTime: When the conditional request was sent.
  ///   - responseTime: When the 304 was received.
  public func updating(
    _ stored: StoredHTTPResponse, with notModified: HTTPResponse, requestTime: Date, responseTime: Date
  ) -> StoredHTTPResponse? {
    let newTag = notModified.headers.first("ETag")
    if let newTag {
      guard let oldTag = stored.entityTag, Self.weakTag(newTag) == Self.weakTag(oldTag) else { return nil }
    } else if let newModified = notModified.headers.first("Last-Modified").flatMap(HTTPDate.parse) {
      if stored.entityTag == nil, let oldModified = stored.lastModified, oldModified != newModified { return nil }
    }
    var updated = stored.response
    var fresh = Self.removingHopByHopFields(notModified.headers)
    fresh.remove("Content-Length")
    updated.headers.replaceFields(with: fresh)
    return StoredHTTPResponse(
      response: updated, requestTime: requestTime, responseTime: responseTime, varyValues: stored.varyValues)
  }

  // MARK: - Errors (RFC 5861 §4, RFC 9111 §4.2.4)

  /// The stale response to serve when revalidating `stored` failed, or `nil` when none may be.
  ///
  /// `stale-if-error` (from the response or the request) allows it within its window when the
  /// origin answered 500, 502, 503 or 504 (`status`) or did not answer at all (`status` `nil`);
  /// without an answer, ``servesStaleWhenDisconnected`` also allows it past the window (its
  /// `Cache-Status` detail is then `disconnected`) unless the request asks for `no-cache`,
  /// `max-age` or `min-fresh`. Never when the response says `must-revalidate` or `no-cache`
  /// (or, in a shared cache, `proxy-revalidate` or `s-maxage`).
  ///
  /// - Parameters:
  ///   - request: The request being answered.
  ///   - stored: The stored response.
  ///   - status: The origin's error status, or `nil` when no response arrived.
  ///   - now: The current time.
  public func staleResponse(
    for request: HTTPRequest, stored: StoredHTTPResponse, afterErrorStatus status: Int?, now: Date
  ) -> HTTPResponse? {
    if let status, !Self.errorStatuses.contains(status) { return nil }
    let resolved = directives(of: stored)
    guard !forbidsStale(by: resolved.directives) else { return nil }
    let requestDirectives = CacheControl(request.headers)
    let lifetime = freshnessLifetime(of: stored, resolved)
    let age = currentAge(of: stored, at: now)
    let responseWindow = resolved.directives.staleIfError
    if let window = [responseWindow, requestDirectives.staleIfError].compactMap({ $0 }).max(),
      age - lifetime <= TimeInterval(window)
    {
      return servedResponse(
        stored, age: age, lifetime: lifetime, detail: "stale-if-error", forward: .stale, forwardStatus: status)
    }
    guard status == nil, servesStaleWhenDisconnected, !requestDirectives.noCache, requestDirectives.maxAge == nil,
      requestDirectives.minFresh == nil
    else { return nil }
    return servedResponse(stored, age: age, lifetime: lifetime, detail: "disconnected", forward: .stale)
  }

  /// The response a cache generates when it must answer without the origin (RFC 9111 §5.2.1.7,
  /// §5.2.2.2): `504 Gateway Timeout`, `Cache-Control: no-store`, marked `generated` in its
  /// `Cache-Status`.
  ///
  /// - Parameter date: The value of its `Date` field.
  public func gatewayTimeout(date: Date) -> HTTPResponse {
    let status = HTTPCacheStatus(detail: HTTPCacheStatus.generatedDetail)
    return HTTPResponse(
      status: 504,
      headers: [
        "Date": HTTPDate.format(date),
        "Cache-Control": "no-store",
        "Content-Type": "text/plain; charset=utf-8",
        "Cache-Status": status.description,
      ],
      body: Data("504 Gateway Timeout: the HTTP cache cannot answer this request without the origin server.".utf8)
    )
  }

  // MARK: - Invalidation (RFC 9111 §4.4)

  /// The URLs whose stored responses `response` to `request` invalidates (RFC 9111 §4.4): after
  /// a non-error response (2xx or 3xx) to an unsafe method, the request's URL and the URLs in
  /// `Location` and `Content-Location` when they have the same origin; none otherwise.
  public func invalidatedURLs(for request: HTTPRequest, response: HTTPResponse) -> [URL] {
    guard !request.method.isSafe, (200..<400).contains(response.status) else { return [] }
    var urls = [request.url]
    for name in ["Location", "Content-Location"] {
      guard let value = response.headers.first(name),
        let url = URL(string: value, relativeTo: request.url)?.absoluteURL,
        Self.sameOrigin(url, request.url)
      else { continue }
      if !urls.contains(url) { urls.append(url) }
    }
    return urls
  }

  /// A `POST` response stored as the answer to later `GET`s of its URL (RFC 9111 §3, RFC 9110
  /// §9.3.3), with the `GET` it answers (the request's fields but its content's), or `nil`: it must be a `200` or `203` whose `Content-Location` is the request's
  /// own URL, with explicit freshness (`max-age`, `s-maxage` in a shared cache, or `Expires`),
  /// and storable as a `GET` response would be.
  func storedResponse(
    forLaterGETs response: HTTPResponse, to request: HTTPRequest, requestTime: Date, responseTime: Date
  ) -> (stored: StoredHTTPResponse, get: HTTPRequest)? {
    guard request.method == .post, response.status == 200 || response.status == 203,
      let location = response.headers.first("Content-Location"),
      URL(string: location, relativeTo: request.url)?.absoluteURL == request.url.absoluteURL
    else { return nil }
    let (directives, targeted) = responseDirectives(of: response.headers)
    guard
      directives.maxAge != nil || (isShared && directives.sharedMaxAge != nil)
        || (!targeted && response.headers.contains("Expires"))
    else { return nil }
    var get = request
    get.method = .get
    get.body = nil
    get.headers.remove("Content-Type")
    get.headers.remove("Content-Length")
    guard let stored = storedResponse(response, for: get, requestTime: requestTime, responseTime: responseTime) else {
      return nil
    }
    return (stored, get)
  }

  // MARK: - Helpers

  static func sameOrigin(_ lhs: URL, _ rhs: URL) -> Bool {
    func port(_ url: URL) -> Int? {
      url.port ?? (url.scheme?.lowercased() == "https" ? 443 : url.scheme?.lowercased() == "http" ? 80 : nil)
    }
    return lhs.scheme?.lowercased() == rhs.scheme?.lowercased() && lhs.host?.lowercased() == rhs.host?.lowercased()
      && port(lhs) == port(rhs)
  }

  /// An entity tag without its weakness indicator, for weak comparison (RFC 9110 §8.8.3.2).
  static func weakTag(_ tag: String) -> String {
    tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag
  }

  /// The hop-by-hop fields (RFC 9110 §7.6.1), and the fields about the proxy a cache forwards
  /// through, which a cache that does not key on that proxy must not store (RFC 9111 §3.1).
  private static let hopByHopFields = [
    "Connection", "Keep-Alive", "Proxy-Connection", "TE", "Transfer-Encoding", "Upgrade",
    "Proxy-Authenticate", "Proxy-Authentication-Info", "Proxy-Authorization",
  ]

  static func removingHopByHopFields(_ headers: HTTPHeaders) -> HTTPHeaders {
    let nominated = headers.listElements(for: "Connection")
    guard !nominated.isEmpty || hopByHopFields.contains(where: headers.contains) else { return headers }
    var result = headers
    for name in hopByHopFields + nominated { result.remove(name) }
    return result
  }
}
