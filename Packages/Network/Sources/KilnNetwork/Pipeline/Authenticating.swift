import _KilnSynchronization

/// Adds the credential to each attempt and, when the server rejects it, refreshes it once and
/// sends the attempt again: the authentication stage of the request pipeline.
///
/// Put it inside ``Retrying``, so that every retried attempt carries the current credential,
/// and outside ``Watching``, so that watches see the request as sent. A request rejected
/// again after the refresh returns the rejection (a `401`), which ``NetworkHandler`` turns
/// into ``NetworkError/status(_:)``. See ``AuthenticationInterceptor`` for how refreshes
/// are shared by the requests rejected together.
public struct Authenticating: RequestMiddleware {
  /// Adds and refreshes the credential.
  public let authentication: any RequestAuthenticating

  /// Creates the stage.
  ///
  /// - Parameter authentication: Adds and refreshes the credential; usually an
  ///   ``AuthenticationInterceptor``.
  public init(_ authentication: any RequestAuthenticating) {
    self.authentication = authentication
  }

  public func send(_ request: HTTPRequest, context: RequestContext, next: RequestNext) async throws(NetworkError)
    -> HTTPResponse
  {
    var sent = request
    let round = try await authentication.authenticate(&sent)
    let response = try await next.send(sent, context: context)
    guard authentication.isRejection(response, for: sent) else { return response }
    context.counters?.add(.authenticationRejections)
    do {
      try await authentication.refresh(rejectedGeneration: round)
    } catch {
      if !error.isCancellation { context.counters?.add(.refreshFailures) }
      throw error
    }
    var again = request
    _ = try await authentication.authenticate(&again)
    return try await next.send(again, context: context)
  }
}
