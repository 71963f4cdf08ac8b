public import Foundation
import _KilnSynchronization

/// A transport that answers from canned replies instead of the network, for unit tests:
/// immediately, after a delay on an injected clock, or never; it records every request.
///
/// ```swift
/// let clock = ManualClock()
/// let transport = StubTransport(clock: clock, replies: [
///   .status(503, headers: ["Retry-After": "2"]),
///   .json(#"{"id": 1}"#, delay: .after(.milliseconds(100))),
/// ])
/// let handler = NetworkHandler(transport: transport, clock: clock)
/// // …drive `clock` and inspect `transport.requests`.
/// ```
///
/// These are Moya's stub behaviours: ``Delay/immediate``, ``Delay/after(_:)`` (Moya's
/// delayed stub, here on the injected clock) and ``Delay/never`` (a server that never
/// answers, to test timeouts and cancellation). Each waiting reply ends with
/// ``TransportError/cancelled`` as soon as the calling task is cancelled.
public final class StubTransport: Transport, Sendable {
  /// When a reply arrives.
  public enum Delay: Sendable, Hashable {
    /// At once.
    case immediate
    /// After the duration, on the transport's clock.
    case after(Duration)
    /// Never: the request waits until its task is cancelled.
    case never
  }

  /// One canned reply: a response or a transport error, and when it arrives.
  public struct Reply: Sendable {
    /// The response or transport error delivered.
    public var result: Result<HTTPResponse, TransportError>
    /// When it arrives.
    public var delay: Delay
    /// How many pieces the body is reported in through ``TransportOptions/onProgress``.
    public var progressSteps: Int

    /// Creates a reply.
    ///
    /// - Parameters:
    ///   - result: The response or transport error delivered.
    ///   - delay: When it arrives; at once by default.
    ///   - progressSteps: How many pieces the body is reported in; 1 by default.
    public init(_ result: Result<HTTPResponse, TransportError>, delay: Delay = .immediate, progressSteps: Int = 1) {
      self.result = result
      self.delay = delay
      self.progressSteps = max(progressSteps, 1)
    }

    /// A response with a status, headers and a body.
    public static func status(
      _ status: Int,
      headers: HTTPHeaders = [:],
      body: Data = Data(),
      delay: Delay = .immediate
    ) -> Reply {
      Reply(.success(HTTPResponse(status: status, headers: headers, body: body)), delay: delay)
    }

    /// A `200` response with a JSON body and `Content-Type: application/json`.
    public static func json(
      _ json: String,
      status: Int = 200,
      headers: HTTPHeaders = [:],
      delay: Delay = .immediate
    ) -> Reply {
      var headers = headers
      if !headers.contains("Content-Type") { headers.add("application/json", for: "Content-Type") }
      return Reply(.success(HTTPResponse(status: status, headers: headers, body: Data(json.utf8))), delay: delay)
    }

    /// A transport error.
    public static func failure(_ error: TransportError, delay: Delay = .immediate) -> Reply {
      Reply(.failure(error), delay: delay)
    }

    /// No reply at all: the request waits until its task is cancelled.
    public static var never: Reply {
      Reply(.failure(.cancelled), delay: .never)
    }
  }

  private struct State {
    var requests: [HTTPRequest] = []
    var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
  }

  private let clock: any Clock<Duration>
  private let reply: @Sendable (_ request: HTTPRequest, _ index: Int) -> Reply
  private let state = KilnMutex(State())

  /// Creates a transport that answers each request with `reply`.
  ///
  /// - Parameters:
  ///   - clock: The clock delayed replies wait on; the continuous clock by default.
  ///   - reply: The reply to a request, given the request and its index among all the requests
  ///     this transport received (from 0).
  public init(
    clock: any Clock<Duration> = ContinuousClock(),
    reply: @escaping @Sendable (_ request: HTTPRequest, _ index: Int) -> Reply
  ) {
    self.clock = clock
    self.reply = reply
  }

  /// Creates a transport that answers with `replies` in order, the last one repeating.
  ///
  /// - Parameters:
  ///   - clock: The clock delayed replies wait on; the continuous clock by default.
  ///   - replies: The replies; at least one.
  public convenience init(clock: any Clock<Duration> = ContinuousClock(), replies: [Reply]) {
    precondition(!replies.isEmpty, "a StubTransport needs at least one reply")
    self.init(clock: clock) { _, index in replies[min(index, replies.count - 1)] }
  }

  /// Every request received so far, in order.
  public var requests: [HTTPRequest] {
    state.withLock { $0.requests }
  }

  /// The number of requests received so far.
  public var requestCount: Int {
    state.withLock { $0.requests.count }
  }

  /// Suspends until at least `count` requests were received.
  ///
  /// - Parameter count: The number of requests to wait for.
  public func waitForRequests(_ count: Int) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let ready = state.withLock { state in
        if state.requests.count >= count { return true }
        state.waiters.append((count, continuation))
        return false
      }
      if ready { continuation.resume() }
    }
  }

  public func send(_ request: HTTPRequest, options: TransportOptions) async throws(TransportError) -> HTTPResponse {
    let (index, ready) = state.withLock { state in
      state.requests.append(request)
      let count = state.requests.count
      var ready: [CheckedContinuation<Void, Never>] = []
      state.waiters.removeAll { waiter in
        guard waiter.count <= count else { return false }
        ready.append(waiter.continuation)
        return true
      }
      return (count - 1, ready)
    }
    for continuation in ready { continuation.resume() }
    guard !Task.isCancelled else { throw .cancelled }

    let reply = reply(request, index)
    switch reply.delay {
    case .immediate:
      break
    case .after(let delay):
      do {
        try await clock.sleep(for: delay)
      } catch {
        throw .cancelled
      }
    case .never:
      await Race<Void>.untilCancelled()
      throw .cancelled
    }
    guard !Task.isCancelled else { throw .cancelled }
    let response = try reply.result.get()
    if let onProgress = options.onProgress {
      let total = Int64(response.body.count)
      for step in 1...reply.progressSteps {
        onProgress(total * Int64(step) / Int64(reply.progressSteps), total)
      }
    }
    if let limit = options.maximumBodySize, response.body.count > limit {
      throw .bodyTooLarge(limit: limit)
    }
    return response
  }
}
