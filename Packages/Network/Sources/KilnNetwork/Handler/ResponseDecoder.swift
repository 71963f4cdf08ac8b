public import Foundation

/// Decodes a response body into a model: `JSONDecoder` (the default) and
/// `PropertyListDecoder` conform, and so can any other format's decoder.
///
/// ```swift
/// let user = try await handler.request(API.me, as: User.self, decoder: PropertyListDecoder())
/// ```
public protocol ResponseDecoder: Sendable {
  /// Decodes `type` from `data`.
  ///
  /// - Throws: A `DecodingError` (any other error is reported as
  ///   `DecodingError.dataCorrupted` with it as the underlying error).
  func decode<Model: Decodable>(_ type: Model.Type, from data: Data) throws -> Model
}

extension JSONDecoder: ResponseDecoder {}

extension PropertyListDecoder: ResponseDecoder {}
