public import Foundation
public import KilnQuery

extension NetworkHandler {
  /// The target's request as a KilnQuery `Query`, to compose with KilnQuery's decorators.
  ///
  /// ```swift
  /// let feed = handler.query(API.feed)
  ///   .map { response in try JSONDecoder().decode(Feed.self, from: response.body) }
  ///   .fallback(cachedFeed)
  /// ```
  ///
  /// Each `load()` sends the request anew (through the cache, retries and watches as
  /// ``request(_:validUntil:progress:)`` does).
  ///
  /// - Parameters:
  ///   - target: The endpoint.
  ///   - validUntil: Until when the response may be served from ``storage``.
  /// - Returns: A query loading the response.
  public func query<Target: TargetGroup>(
    _ target: Target,
    validUntil: (@Sendable (Data) -> Date)? = nil
  ) -> some Query<HTTPResponse, NetworkError> {
    AnyQuery { () async throws(NetworkError) -> HTTPResponse in
      try await self.request(target, validUntil: validUntil)
    }
  }

  /// The target's request, decoded, as a KilnQuery `Query`.
  ///
  /// ```swift
  /// let user = handler.query(API.user(id: 7), as: User.self).retry(.default)
  /// ```
  ///
  /// - Parameters:
  ///   - target: The endpoint.
  ///   - type: The model type.
  ///   - decoder: The decoder; the handler's ``decoder`` by default.
  ///   - validUntil: Until when the response may be served from ``storage``, given the model.
  /// - Returns: A query loading the model.
  public func query<Target: TargetGroup, Model: Decodable & Sendable>(
    _ target: Target,
    as type: Model.Type,
    decoder: (any ResponseDecoder)? = nil,
    validUntil: (@Sendable (Model) -> Date)? = nil
  ) -> some Query<Model, NetworkError> {
    AnyQuery { () async throws(NetworkError) -> Model in
      try await self.request(target, as: type, decoder: decoder, validUntil: validUntil)
    }
  }
}
