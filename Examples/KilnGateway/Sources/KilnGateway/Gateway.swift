import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import KilnCore
import KilnNetwork
import KilnStorage
import Logging
import PostgresNIO
import ServiceLifecycle

/// One gateway instance: `GET /items/{id}` asks the origin through Kiln's request pipeline.
///
/// With `--cache shared`, the pipeline keeps the origin's responses in an `HTTPCache` with the
/// shared policy over a `PostgresCache`: a PostgreSQL table every instance reads and writes,
/// with each instance's memory in front (kept true by `LISTEN`/`NOTIFY`). Misses and
/// revalidations of one URL are collapsed across instances (the cache takes the table's lease
/// for the URL), so the origin sees one request per key per freshness lifetime however many
/// instances ask. With `--cache off`, the same pipeline without the cache stage.
struct Gateway {
  enum CacheMode: String {
    case shared, off
  }

  let port: Int
  let origin: String
  let cacheMode: CacheMode
  let postgresURL: String?
  let table: String
  let instance: String

  init(options: Options) throws(UsageError) {
    port = try options.int("port", default: 8081)
    origin = try options.string("origin")
    guard let mode = CacheMode(rawValue: try options.string("cache", default: "shared")) else {
      throw UsageError("--cache takes shared or off")
    }
    cacheMode = mode
    postgresURL = mode == .shared ? try options.string("postgres") : nil
    table = try options.string("table", default: "kiln_gateway_responses")
    instance = try options.string("instance", default: "gateway")
  }

  func run() async throws {
    var logger = Logger(label: "gateway-\(instance)")
    logger.logLevel = .warning

    // One HTTPClient for the origin, with room for as many connections as requests in flight
    // (AsyncHTTPClient's default is 8 per host, which would queue a busy gateway's misses).
    var pool = HTTPClient.Configuration.ConnectionPool(idleTimeout: .seconds(60))
    pool.concurrentHTTP1ConnectionsPerHostSoftLimit = 256
    let client = HTTPClient(
      eventLoopGroup: HTTPClient.defaultEventLoopGroup,
      configuration: HTTPClient.Configuration(
        redirectConfiguration: .disallow, timeout: .init(connect: .seconds(2), read: .seconds(10)),
        connectionPool: pool, decompression: .disabled))
    let transport = AsyncHTTPClientTransport(client: client)

    // Started together, stopped in the reverse order (the server first, once it has
    // answered the requests it has, then the PostgreSQL client, then the HTTP client).
    var services: [any Service] = [HTTPClientService(client: client)]
    var postgres: PostgresClient?
    if cacheMode == .shared, let postgresURL {
      let postgresClient = PostgresClient(
        configuration: try PostgresStore<String, Data>.configuration(url: postgresURL), backgroundLogger: logger)
      services.append(postgresClient)
      postgres = postgresClient
    }
    services.append(Server(gateway: self, transport: transport, postgres: postgres, logger: logger))
    let group = ServiceGroup(
      configuration: ServiceGroupConfiguration(
        services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
    try await group.run()
    say("gateway \(instance) stopped")
  }

  /// The gateway's HTTP server and pipeline, made once the PostgreSQL client runs (the store
  /// creates its table).
  struct Server: Service {
    let gateway: Gateway
    let transport: AsyncHTTPClientTransport
    let postgres: PostgresClient?
    let logger: Logger

    func run() async throws {
      var appServices: [any Service] = []
      var middleware: [any RequestMiddleware] = [Deduplicating()]
      var listening: PostgresCache<String, Data>?
      if let postgres {
        let store = try await PostgresStore<String, Data>(client: postgres, table: gateway.table)
        let shared = PostgresCache(
          memory: MemoryCache<String, Data>(countLimit: 10_000), store: store, logger: logger)
        // The store sweeps expired rows and leases; the cache listens: another instance's
        // write drops this instance's copy of the key.
        appServices += [store, shared]
        listening = shared
        middleware.append(HTTPCaching(HTTPCache(store: shared, policy: .shared)))
      }
      middleware += [Retrying(.default), AttemptTimeout(.seconds(5))]
      let chain = RequestChain(transport: transport, middleware: middleware)

      // Every counter of the pipeline (its HTTP cache's among them) and of the shared store.
      let metrics: @Sendable () -> String =
        if let listening {
          { CounterReading.prometheusText(sources: ["origin": chain, "shared_store": listening]) }
        } else {
          { CounterReading.prometheusText(sources: ["origin": chain]) }
        }
      let router = Router()
      let originURL = gateway.origin
      let logger = logger
      router.get("health") { _, _ in "ok" }
      router.get("items/:id") { request, context -> Response in
        let id = try context.parameters.require("id")
        let query = request.uri.query.map { "?" + $0 } ?? ""
        guard let url = URL(string: "\(originURL)/items/\(id)\(query)") else { throw HTTPError(.badRequest) }
        do {
          return Response(try await chain.send(KilnNetwork.HTTPRequest(url: url)))
        } catch {
          // No response from the origin (refused, timed out, retries spent): a gateway's 502.
          logger.warning("origin request failed", metadata: ["error": "\(error)"])
          throw HTTPError(.badGateway)
        }
      }
      router.get("metrics") { _, _ -> Response in
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
        return Response(
          status: .ok, headers: headers,
          body: ResponseBody(byteBuffer: ByteBuffer(string: metrics())))
      }

      let app = Application(
        router: router,
        configuration: .init(
          address: .hostname("127.0.0.1", port: gateway.port), serverName: "kiln-gateway-\(gateway.instance)"),
        services: appServices,
        onServerRunning: { [gateway, listening] channel in
          // Ready once this instance hears the other instances' writes.
          if let listening { await listening.waitUntilSubscribed() }
          let port = channel.localAddress?.port ?? gateway.port
          say("gateway \(gateway.instance) listening on 127.0.0.1:\(port) (cache \(gateway.cacheMode.rawValue))")
        },
        logger: logger)
      try await app.run()
    }
  }
}

extension Response {
  /// The origin's response as the gateway forwards it: status, body and the fields a client
  /// of a cache cares about.
  init(_ response: KilnNetwork.HTTPResponse) {
    var headers = HTTPFields()
    for name in ["Content-Type", "Cache-Control", "ETag", "Last-Modified", "Age", "Cache-Status"] {
      let values = response.headers.values(for: name)
      if !values.isEmpty, let field = HTTPField.Name(name) {
        headers[field] = values.joined(separator: ", ")
      }
    }
    self.init(
      status: .init(code: response.status), headers: headers,
      body: ResponseBody(byteBuffer: ByteBuffer(bytes: response.body)))
  }
}

/// Shuts down the gateway's HTTPClient when the service group stops.
struct HTTPClientService: Service {
  let client: HTTPClient

  func run() async throws {
    try? await gracefulShutdown()
    try await client.shutdown()
  }
}
