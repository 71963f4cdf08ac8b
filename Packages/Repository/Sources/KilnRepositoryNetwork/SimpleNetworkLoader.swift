public import KilnNetwork
public import KilnRepository

/// A KilnRepository `Loader` whose objects come from a `NetworkHandler`: it builds a target per
/// key and decodes the response body as JSON (Loadability's `SimpleNetworkLoader`).
///
/// ```swift
/// let users = SimpleNetworkLoader<Int, User>(handler: handler) { id in API.user(id: id) }
/// await users.load(key: 42)
/// users.object   // the decoded user, or nil with users.error set to a NetworkError
/// ```
///
/// Everything a `Loader` promises holds: concurrent loads of one key send one request,
/// `refresh(key:)` always sends a new one, and the newest answer wins. Retries,
/// authentication, timeouts and caching are the handler's.
public typealias SimpleNetworkLoader<Key: Hashable & Sendable, Object: Decodable & Sendable> = Loader<Key, Object>

extension Loader where Object: Decodable {
  /// Creates a loader that sends `target(key)` through `handler` and decodes the response.
  ///
  /// - Parameters:
  ///   - handler: Sends the requests (with its transport, retries, authentication, watches).
  ///   - decoder: How the body becomes an `Object`; the handler's JSON decoder when `nil`.
  ///   - target: The target of a key.
  public convenience init<Target: TargetGroup>(
    handler: NetworkHandler,
    decoder: (any ResponseDecoder)? = nil,
    target: @escaping @Sendable (Key) -> Target
  ) {
    self.init { key in
      try await handler.request(target(key), as: Object.self, decoder: decoder)
    }
  }
}
