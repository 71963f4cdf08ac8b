#if ServiceLifecycle && Metrics && AsyncHTTPClient
  import Foundation
  import KilnCore
  import KilnNetwork
  import KilnStorage
  import KilnTesting
  import Logging
  import MetricsTestKit
  import ServiceLifecycle
  import Testing
  import UnixSignals
  import _KilnTestServer

  /// Fetches from the origin and keeps each answer in the store until the group shuts down.
  private final class Copier: Service {
    let handler: NetworkHandler
    let store: SQLiteStore<String, String>
    let origin: URL
    private let written = AsyncCounter()

    init(handler: NetworkHandler, store: SQLiteStore<String, String>, origin: URL) {
      self.handler = handler
      self.store = store
      self.origin = origin
    }

    /// The writes the store acknowledged.
    var acknowledged: Int { written.value }

    func waitForWrites(_ count: Int) async { await written.wait(untilAtLeast: count) }

    func run() async throws {
      var index = 0
      while !Task.isShuttingDownGracefully && !Task.isCancelled {
        let response = try await handler.request(RawRequest(url: origin.appending(path: "item/\(index)")))
        try await store.setValue(String(decoding: response.body, as: UTF8.self), forKey: "item-\(index)")
        written.increment()
        index += 1
      }
    }
  }

  private struct RawRequest: TargetGroup {
    let url: URL
    var baseURL: URL { url }
    var path: String { "" }
    var method: HTTPMethod { .get }
    var task: NetworkTask { .plain }
  }

  @Suite("Kiln's services under a ServiceGroup and a real SIGTERM", .timeLimit(.minutes(1)), .serialized)
  struct ServiceGroupTests {
    @Test(
      "SIGTERM shuts down in reverse order: the writer stops, the reporter publishes last, the store and the client close; nothing is lost"
    )
    func sigterm() async throws {
      let server = try await TestServer.start(recordsRequests: false) { request in .text(request.path) }
      try await withTemporaryDirectory { directory in
        let metrics = TestMetrics()
        let transport = AsyncHTTPClientTransport()
        let handler = NetworkHandler(transport: transport)
        let url = directory.appending(path: "copies.sqlite")
        let store = try SQLiteStore<String, String>(url: url)
        let reporter = MetricsReporter(interval: .seconds(3_600), factory: metrics)
        reporter.register(handler, as: "origin")
        let copier = Copier(handler: handler, store: store, origin: server.baseURL)
        let group = ServiceGroup(
          configuration: ServiceGroupConfiguration(
            services: [transport, store, reporter, copier], gracefulShutdownSignals: [.sigterm],
            logger: Logger(label: "test")))
        let running = Task { try await group.run() }
        await copier.waitForWrites(20)
        kill(getpid(), SIGTERM)
        try await running.value

        // The writer stopped first, then the reporter published what the handler counted.
        let requests = handler.statistics.requests
        #expect(requests >= 20)
        #expect(metrics.counterTotal(label: "kiln_http_client_requests_total") == Int64(requests))
        #expect(
          try metrics.expectGauge("kiln_http_client_requests_in_flight", [("kiln_source", "origin")]).lastValue == 0)
        // Every acknowledged write is in the file; the store is closed.
        let reopened = try SQLiteStore<String, String>(url: url)
        for index in 0..<copier.acknowledged {
          #expect(try await reopened.value(forKey: "item-\(index)") == "/item/\(index)")
        }
        await reopened.close()
        await #expect(throws: SQLiteStoreError.self) { try await store.value(forKey: "item-0") }
        // The client is shut down: the transport sends nothing more.
        await #expect(throws: (any Error).self) {
          try await transport.send(HTTPRequest(url: server.url("/late")), options: TransportOptions())
        }
      }
      try await server.stop()
    }
  }
#endif
