extension HTTPResponse {
  /// What the nearest cache did with this response: the last member of its `Cache-Status`
  /// field (RFC 9211 lists caches from the origin towards the client); `nil` without one.
  public var cacheStatus: HTTPCacheStatus? {
    headers.listElements(for: "Cache-Status").last.flatMap(HTTPCacheStatus.init(member:))
  }

  /// Whether an HTTP cache generated this response itself (its `Cache-Status` says `generated`)
  /// rather than the origin server.
  public var isGeneratedByCache: Bool {
    cacheStatus?.isGenerated ?? false
  }
}
