/// What an HTTP cache does with a request, as ``HTTPCachePolicy/decision(for:stored:now:)``
/// decides it.
public enum HTTPCacheDecision: Sendable, Hashable {
  /// Answer with this response from the cache (its `Age` set), asking nobody.
  case serve(HTTPResponse)
  /// Answer with this stale response at once (`stale-while-revalidate`) and send `revalidation`
  /// in the background to refresh the stored response.
  case serveStale(HTTPResponse, revalidation: HTTPRequest)
  /// Send `request` to the origin: conditional (`If-None-Match`, `If-Modified-Since`) when a
  /// stored response has validators; `reason` says why the cache could not answer.
  case forward(HTTPRequest, reason: HTTPCacheStatus.Forward)
  /// Answer with a response the cache generates itself, such as a 504 for `only-if-cached`
  /// with nothing usable stored.
  case generate(HTTPResponse)
}
