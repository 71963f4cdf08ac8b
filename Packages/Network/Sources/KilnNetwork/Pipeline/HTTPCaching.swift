/// Answers from an RFC 9111 ``HTTPCache`` where it may and sends the rest down the chain: the
/// HTTP cache as a stage of the request pipeline (``Transport/caching(in:)`` puts the same
/// cache in front of a bare transport).
///
/// Put it outside ``Retrying`` and ``Authenticating``: a fresh hit then returns at once and
/// never waits for a retry or a credential refresh, while a miss or a revalidation goes
/// through them. A shared cache (``HTTPCachePolicy/shared``) that must see `Authorization`
/// to refuse storing authenticated responses belongs inside ``Authenticating`` instead.
/// ``CachingTransport`` documents what the cache does.
public struct HTTPCaching: RequestMiddleware {
  /// The cache.
  public let cache: HTTPCache

  /// Creates the stage.
  ///
  /// - Parameter cache: The cache to answer from and store into.
  public init(_ cache: HTTPCache) {
    self.cache = cache
  }

  public func send(_ request: HTTPRequest, context: RequestContext, next: RequestNext) async throws(NetworkError)
    -> HTTPResponse
  {
    let exchange = CacheExchange(cache: cache)
    let lookup = exchange.lookUpNow(request)
    if let hit = exchange.hit(lookup) { return hit }
    var withoutProgress = context
    withoutProgress.progress = nil
    let background = withoutProgress
    return try await exchange.respond(
      to: request, lookup: lookup,
      send: { request throws(NetworkError) in try await next.send(request, context: context) },
      sendInBackground: { request throws(NetworkError) in try await next.send(request, context: background) })
  }
}
