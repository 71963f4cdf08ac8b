public import Foundation

extension NetworkHandler {
  /// Sends the target's request and calls `callback` with the response or `onError` with the
  /// error: exactly one of them, exactly once.
  ///
  /// ```swift
  /// handler.request(API.feed) { response in
  ///   show(response.body)
  /// } onError: { error in
  ///   show(error)
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - target: The endpoint.
  ///   - validUntil: Until when the response may be served from ``storage``.
  ///   - progress: Told as the body arrives, per attempt.
  ///   - callback: Called with the response.
  ///   - onError: Called with the error; ``NetworkError/cancelled`` when the returned task is
  ///     cancelled, even before it started.
  /// - Returns: The task running the request; cancel it to cancel the request.
  @discardableResult
  public func request(
    _ target: some TargetGroup,
    validUntil: (@Sendable (Data) -> Date)? = nil,
    progress: (@Sendable (DownloadProgress) -> Void)? = nil,
    callback: @escaping @Sendable (HTTPResponse) -> Void,
    onError: @escaping @Sendable (NetworkError) -> Void
  ) -> Task<Void, Never> {
    Task {
      do throws(NetworkError) {
        callback(try await request(target, validUntil: validUntil, progress: progress))
      } catch {
        onError(error)
      }
    }
  }

  /// Sends the target's request, decodes the body, and calls `callback` with the model or
  /// `onError` with the error: exactly one of them, exactly once.
  ///
  /// - Parameters:
  ///   - target: The endpoint.
  ///   - type: The model type.
  ///   - decoder: The decoder; the handler's ``decoder`` by default.
  ///   - validUntil: Until when the response may be served from ``storage``, given the model.
  ///   - progress: Told as the body arrives, per attempt.
  ///   - callback: Called with the model.
  ///   - onError: Called with the error; ``NetworkError/cancelled`` when the returned task is
  ///     cancelled, even before it started.
  /// - Returns: The task running the request; cancel it to cancel the request.
  @discardableResult
  public func request<Model: Decodable & Sendable>(
    _ target: some TargetGroup,
    as type: Model.Type,
    decoder: (any ResponseDecoder)? = nil,
    validUntil: (@Sendable (Model) -> Date)? = nil,
    progress: (@Sendable (DownloadProgress) -> Void)? = nil,
    callback: @escaping @Sendable (Model) -> Void,
    onError: @escaping @Sendable (NetworkError) -> Void
  ) -> Task<Void, Never> {
    Task {
      do throws(NetworkError) {
        callback(try await request(target, as: type, decoder: decoder, validUntil: validUntil, progress: progress))
      } catch {
        onError(error)
      }
    }
  }
}
