/// Shows every attempt to ``NetworkWatch``es, which may also change it: the watching stage of
/// the request pipeline (Lynn's watches, Moya's plugins).
///
/// For each attempt it calls each watch's ``NetworkWatch/prepare(_:for:)`` in order (when the
/// context has a target), then ``NetworkWatch/willSend(_:attempt:)``, sends, and calls
/// ``NetworkWatch/didReceive(_:for:attempt:)`` with the response or the error. Put it inside
/// ``Authenticating`` so that watches see the credential (``LoggingWatch`` redacts it), and
/// inside ``Retrying`` so that they see every attempt.
public struct Watching: RequestMiddleware {
  /// The watches, in order.
  public let watches: [any NetworkWatch]

  /// Creates the stage.
  ///
  /// - Parameter watches: The watches, in order.
  public init(_ watches: [any NetworkWatch]) {
    self.watches = watches
  }

  public func send(_ request: HTTPRequest, context: RequestContext, next: RequestNext) async throws(NetworkError)
    -> HTTPResponse
  {
    var sent = request
    if let target = context.target {
      for watch in watches { sent = watch.prepare(sent, for: target) }
    }
    for watch in watches { watch.willSend(sent, attempt: context.attempt) }
    let result: Result<HTTPResponse, NetworkError>
    do throws(NetworkError) {
      result = .success(try await next.send(sent, context: context))
    } catch {
      result = .failure(error)
    }
    for watch in watches { watch.didReceive(result, for: sent, attempt: context.attempt) }
    return try result.get()
  }
}
