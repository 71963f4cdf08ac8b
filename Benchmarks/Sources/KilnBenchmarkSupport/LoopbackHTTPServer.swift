public import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// A minimal HTTP/1.1 server on loopback that answers every request, whatever its path, with
/// the same `200` response: a fixed body, its `Content-Length` and `Content-Type` (and any
/// further fields given), the connection kept alive.
///
/// It exists so that network benchmarks measure real HTTP over real sockets without any
/// server-side work worth mentioning; both sides of a comparison talk to the same server.
/// It runs on one event loop thread of its own and lives as long as the benchmark process.
public final class LoopbackHTTPServer: Sendable {
  /// The port the server listens on (`127.0.0.1`).
  public let port: Int
  private let group: MultiThreadedEventLoopGroup
  private let channel: any Channel

  private init(port: Int, group: MultiThreadedEventLoopGroup, channel: any Channel) {
    self.port = port
    self.group = group
    self.channel = channel
  }

  /// Starts a server on a port the system chooses.
  ///
  /// - Parameters:
  ///   - body: The body of every response.
  ///   - contentType: Its `Content-Type`.
  ///   - headers: Further header fields of every response, such as `Cache-Control`; none by
  ///     default.
  /// - Returns: The running server.
  /// - Throws: When the port cannot be bound.
  public static func start(
    body: Data, contentType: String = "application/json", headers extraHeaders: [(String, String)] = []
  ) throws -> LoopbackHTTPServer {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let bytes = [UInt8](body)
    var headers = HTTPHeaders()
    headers.add(name: "Content-Type", value: contentType)
    headers.add(name: "Content-Length", value: String(bytes.count))
    for (name, value) in extraHeaders { headers.add(name: name, value: value) }
    let fixedHeaders = headers
    do {
      let channel = try ServerBootstrap(group: group)
        .serverChannelOption(.backlog, value: 256)
        .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
        .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
        .childChannelInitializer { channel in
          channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
            try channel.pipeline.syncOperations.addHandler(
              FixedResponder(headers: fixedHeaders, body: channel.allocator.buffer(bytes: bytes)))
          }
        }
        .bind(host: "127.0.0.1", port: 0)
        .wait()
      guard let port = channel.localAddress?.port else {
        try? channel.close().wait()
        throw LoopbackHTTPServerError.noPort
      }
      return LoopbackHTTPServer(port: port, group: group, channel: channel)
    } catch {
      try? group.syncShutdownGracefully()
      throw error
    }
  }

  /// The URL of `path` on this server: `http://127.0.0.1:<port>/<path>`.
  public func url(_ path: String = "") -> URL {
    URL(string: "http://127.0.0.1:\(port)/\(path.hasPrefix("/") ? String(path.dropFirst()) : path)")!
  }
}

/// Why a ``LoopbackHTTPServer`` did not start.
public enum LoopbackHTTPServerError: Error {
  /// The bound socket reported no port.
  case noPort
}

/// Answers each request, once it has fully arrived, with the fixed response.
private final class FixedResponder: ChannelInboundHandler {
  typealias InboundIn = HTTPServerRequestPart
  typealias OutboundOut = HTTPServerResponsePart

  private let headers: HTTPHeaders
  private let body: ByteBuffer
  private var keepAlive = true
  private var version = HTTPVersion.http1_1

  init(headers: HTTPHeaders, body: ByteBuffer) {
    self.headers = headers
    self.body = body
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    switch Self.unwrapInboundIn(data) {
    case .head(let head):
      keepAlive = head.isKeepAlive
      version = head.version
    case .body:
      break
    case .end:
      var headers = headers
      if !keepAlive { headers.add(name: "Connection", value: "close") }
      let head = HTTPResponseHead(version: version, status: .ok, headers: headers)
      context.write(Self.wrapOutboundOut(.head(head)), promise: nil)
      context.write(Self.wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
      if keepAlive {
        context.writeAndFlush(Self.wrapOutboundOut(.end(nil)), promise: nil)
      } else {
        let channel = context.channel
        context.writeAndFlush(Self.wrapOutboundOut(.end(nil))).whenComplete { _ in
          channel.close(promise: nil)
        }
      }
    }
  }
}
