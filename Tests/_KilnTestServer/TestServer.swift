// _KilnTestServer — a real HTTP/1.1 server on loopback for Kiln's tests and demo.
//
// Not a product: consumers of Kiln never build or fetch it (or swift-nio). Network tests and
// `kiln-demo` start one per scenario on a free port, answer each request with an async
// handler, and can stop it to play "offline".

public import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// An HTTP server on 127.0.0.1 whose every request is answered by an async handler.
///
/// ```swift
/// let server = try await TestServer.start { request in
///   request.path == "/articles" ? .json(articles) : .status(404)
/// }
/// let (data, _) = try await URLSession.shared.data(from: server.url("/articles"))
/// try await server.stop()
/// ```
public final class TestServer: Sendable {
  /// Answers one request.
  public typealias Handler = @Sendable (TestRequest) async -> TestResponse

  /// The port the server listens on (chosen by the system unless given).
  public let port: Int

  private let group: MultiThreadedEventLoopGroup
  private let channel: any Channel
  private let recorded: NIOLockedValueBox<[TestRequest]>
  private let connections: NIOLockedValueBox<Int>
  private let answering: NIOLockedValueBox<Int>

  private init(
    port: Int, group: MultiThreadedEventLoopGroup, channel: any Channel, recorded: NIOLockedValueBox<[TestRequest]>,
    connections: NIOLockedValueBox<Int>, answering: NIOLockedValueBox<Int>
  ) {
    self.port = port
    self.group = group
    self.channel = channel
    self.recorded = recorded
    self.connections = connections
    self.answering = answering
  }

  /// Starts a server.
  ///
  /// - Parameters:
  ///   - port: The port to listen on; `0` (the default) lets the system choose a free one.
  ///   - recordsRequests: Whether ``requests`` and ``requestCount(path:)`` keep every request;
  ///     `true` by default. A server answering millions of requests (a soak) passes `false`,
  ///     so that its memory stays flat; both then stay empty.
  ///   - handler: Answers each request. It may suspend (to simulate a slow server).
  /// - Returns: The running server.
  /// - Throws: When the port cannot be bound.
  public static func start(
    port: Int = 0, recordsRequests: Bool = true, handler: @escaping Handler
  ) async throws -> TestServer {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let recorded = NIOLockedValueBox<[TestRequest]>([])
    let connections = NIOLockedValueBox(0)
    let answering = NIOLockedValueBox(0)
    do {
      let channel = try await ServerBootstrap(group: group)
        .serverChannelOption(.backlog, value: 256)
        .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
        .childChannelInitializer { channel in
          let connection = connections.withLockedValue { count in
            count += 1
            return count
          }
          return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
            try channel.pipeline.syncOperations.addHandler(
              RequestHandler(
                handler: handler, connection: connection, answering: answering,
                record: { request in
                  if recordsRequests { recorded.withLockedValue { $0.append(request) } }
                })
            )
          }
        }
        .bind(host: "127.0.0.1", port: port)
        .get()
      guard let boundPort = channel.localAddress?.port else {
        try? await channel.close()
        throw TestServerError.noPort
      }
      return TestServer(
        port: boundPort, group: group, channel: channel, recorded: recorded, connections: connections,
        answering: answering)
    } catch {
      try? await group.shutdownGracefully()
      throw error
    }
  }

  /// `http://127.0.0.1:<port>`.
  public var baseURL: URL {
    URL(string: "http://127.0.0.1:\(port)")!
  }

  /// The URL of `path` (with an optional query) on this server.
  public func url(_ path: String) -> URL {
    URL(string: "http://127.0.0.1:\(port)\(path.hasPrefix("/") ? "" : "/")\(path)")!
  }

  /// The URL of `path` (with an optional query) on this server, addressed by `host`: `"localhost"`
  /// reaches the same server under another host name than ``baseURL``'s `127.0.0.1`.
  public func url(_ path: String, host: String) -> URL {
    URL(string: "http://\(host):\(port)\(path.hasPrefix("/") ? "" : "/")\(path)")!
  }

  /// How many connections the server has accepted so far.
  public var connectionCount: Int {
    connections.withLockedValue { $0 }
  }

  /// Every request received so far, in arrival order.
  public var requests: [TestRequest] {
    recorded.withLockedValue { $0 }
  }

  /// How many requests asked for `path` (without the query).
  public func requestCount(path: String) -> Int {
    recorded.withLockedValue { requests in requests.count { $0.path == path } }
  }

  /// Stops listening and closes every connection; later requests are refused.
  ///
  /// Waits (up to two seconds) for handlers still answering to return first, so that none
  /// writes to a stopped server.
  public func stop() async throws {
    try? await channel.close()
    let deadline = ContinuousClock.now + .seconds(2)
    while answering.withLockedValue({ $0 }) > 0 && ContinuousClock.now < deadline {
      try? await Task.sleep(for: .milliseconds(5))
    }
    try await group.shutdownGracefully()
  }
}

/// Why a ``TestServer`` did not start.
public enum TestServerError: Error {
  /// The bound socket reported no port.
  case noPort
}

/// Collects one request's parts and answers it with the handler's response.
private final class RequestHandler: ChannelInboundHandler, RemovableChannelHandler {
  typealias InboundIn = HTTPServerRequestPart
  typealias OutboundOut = HTTPServerResponsePart

  private let handler: TestServer.Handler
  private let record: @Sendable (TestRequest) -> Void
  private let connection: Int
  private let answering: NIOLockedValueBox<Int>
  private var head: HTTPRequestHead?
  private var body: [UInt8] = []

  init(
    handler: @escaping TestServer.Handler, connection: Int, answering: NIOLockedValueBox<Int>,
    record: @escaping @Sendable (TestRequest) -> Void
  ) {
    self.handler = handler
    self.connection = connection
    self.answering = answering
    self.record = record
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    switch unwrapInboundIn(data) {
    case .head(let head):
      self.head = head
      body = []
    case .body(let buffer):
      body += buffer.readableBytesView
    case .end:
      guard let head else { return }
      self.head = nil
      let request = TestRequest(head: head, body: Data(body), connection: connection)
      record(request)
      let handler = handler
      let keepAlive = head.isKeepAlive
      let version = head.version
      let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
      let channel = context.channel
      let answering = answering
      answering.withLockedValue { $0 += 1 }
      context.eventLoop.makeFutureWithTask { () -> TestResponse? in
        let response = await handler(request)
        if response.isSimple { return response }
        await Self.stream(response, head: head, channel: channel)
        return nil
      }.whenComplete { result in
        answering.withLockedValue { $0 -= 1 }
        guard case .success(let response?) = result else { return }
        Self.write(response, version: version, keepAlive: keepAlive, context: bound.value)
      }
    }
  }

  private static func write(
    _ response: TestResponse, version: HTTPVersion, keepAlive: Bool, context: ChannelHandlerContext
  ) {
    if response.dropsConnection {
      context.close(promise: nil)
      return
    }
    var headers = HTTPHeaders(response.headers)
    headers.replaceOrAdd(name: "Content-Length", value: String(response.body.count))
    if !keepAlive { headers.replaceOrAdd(name: "Connection", value: "close") }
    let head = HTTPResponseHead(
      version: version, status: HTTPResponseStatus(statusCode: response.status), headers: headers)
    context.write(NIOAny(HTTPServerResponsePart.head(head)), promise: nil)
    var buffer = context.channel.allocator.buffer(capacity: response.body.count)
    buffer.writeBytes(response.body)
    context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(buffer))), promise: nil)
    let done = context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)))
    if !keepAlive {
      let channel = context.channel
      done.whenComplete { _ in channel.close(promise: nil) }
    }
  }

  /// Sends a response that is delayed, generated, trickled, chunked or cut short, one piece at
  /// a time, each write awaited before the next (so a huge body is never held in memory).
  private static func stream(_ response: TestResponse, head request: HTTPRequestHead, channel: any Channel) async {
    if response.delay > .zero {
      try? await Task.sleep(for: response.delay)
    }
    if response.dropsConnection {
      try? await channel.close()
      return
    }
    let length = response.bodyLength
    var headers = HTTPHeaders(response.headers)
    if response.announcesLength {
      headers.replaceOrAdd(name: "Content-Length", value: String(length))
    } else {
      headers.replaceOrAdd(name: "Transfer-Encoding", value: "chunked")
    }
    let closes = !request.isKeepAlive || response.dropsAfterBodyBytes != nil
    if closes { headers.replaceOrAdd(name: "Connection", value: "close") }
    let head = HTTPResponseHead(
      version: request.version, status: HTTPResponseStatus(statusCode: response.status), headers: headers)
    do {
      try await channel.writeAndFlush(HTTPServerResponsePart.head(head)).get()
      let end = min(length, response.dropsAfterBodyBytes ?? length)
      let pieceSize = max(1, response.chunkSize ?? max(end, 1))
      var offset = 0
      while offset < end {
        if offset > 0 && response.chunkInterval > .zero {
          try await Task.sleep(for: response.chunkInterval)
        }
        let next = min(end, offset + pieceSize)
        let buffer = channel.allocator.buffer(bytes: response.bodyBytes(offset..<next))
        try await channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(buffer))).get()
        offset = next
      }
      if response.dropsAfterBodyBytes != nil {
        try await channel.close()
        return
      }
      try await channel.writeAndFlush(HTTPServerResponsePart.end(nil)).get()
      if closes { try await channel.close() }
    } catch {
      try? await channel.close()
    }
  }
}
