import Benchmark
import CoreMetrics
import Foundation
import InMemoryTracing
import KilnBenchmarkSupport
import KilnCore
import KilnNetwork
import KilnStorage
import Logging
import Tracing

/// What observing Kiln costs (issue 24): the same work with Kiln's `Logging`, `Metrics` and
/// `Tracing` integrations wired as a server would wire them, beside the same work without them,
/// in one process. The package builds Kiln with every trait on; the counters themselves (an
/// atomic add) are part of both sides, as they are of every build, with or without traits.
///
/// The backends are real no-op ones, bootstrapped: swift-metrics' `NOOPMetricsHandler` and
/// swift-distributed-tracing's `NoOpTracer`, so what is measured is Kiln's side of the
/// integration (spans started and ended, attributes, context injection, timers looked up and
/// recorded, the reporter reading counters), not a backend's.
func observationBenchmarks() {
  MetricsSystem.bootstrap(NOOPMetricsHandler.instance)
  InstrumentationSystem.bootstrap(NoOpTracer())
  var logger = Logger(label: "kiln.benchmarks")
  logger.logLevel = .info  // production: LoggingWatch logs at debug, so it pays a level check

  // A MemoryCache hit, registered with a MetricsReporter that publishes every 10 ms in the
  // background, against the same hit on an identical cache that nothing reports.
  let keyCount = 1_000
  let observed = MemoryCache<Int, Int>(countLimit: 10_000, entryLifetime: nil)
  let plain = MemoryCache<Int, Int>(countLimit: 10_000, entryLifetime: nil)
  for key in 0..<keyCount {
    observed[key] = key
    plain[key] = key
  }
  let reporter = MetricsReporter(interval: .milliseconds(10))
  reporter.register(observed, as: "benchmark")
  Task { await reporter.run() }

  comparison("MemoryCache hit, reported by a running MetricsReporter (traits on, no-op backends) vs not reported") {
    benchmark in
    var key = 0
    for _ in benchmark.scaledIterations {
      blackHole(observed[key])
      key = key == keyCount - 1 ? 0 : key + 1
    }
  } baseline: { benchmark in
    var key = 0
    for _ in benchmark.scaledIterations {
      blackHole(plain[key])
      key = key == keyCount - 1 ? 0 : key + 1
    }
  }

  // The CPU the observation stages add to a request, over a transport answering from memory
  // (StageCostBenchmarks.swift): no target, the difference is the figure.
  let bare = RequestChain(transport: inMemoryTransport)
  let observedChain = RequestChain(
    transport: inMemoryTransport,
    middleware: [RequestTracing(), RequestMetrics(), Watching([LoggingWatch(logger: logger)])])
  comparison(
    "RequestChain stage cost: RequestTracing + RequestMetrics + LoggingWatch (no-op backends) vs no stage", batch: 1_000
  ) {
    _ in
    for _ in 0..<1_000 { blackHole(try await observedChain.send(inMemoryRequest)) }
  } baseline: { _ in
    for _ in 0..<1_000 { blackHole(try await bare.send(inMemoryRequest)) }
  }

  for (name, stage) in [
    ("RequestTracing", RequestTracing() as any RequestMiddleware),
    ("RequestMetrics", RequestMetrics()),
    ("Watching(LoggingWatch at info)", Watching([LoggingWatch(logger: logger)])),
  ] {
    let chain = RequestChain(transport: inMemoryTransport, middleware: [stage])
    comparison("RequestChain stage cost: \(name) (no-op backends) vs no stage", batch: 1_000) { _ in
      for _ in 0..<1_000 { blackHole(try await chain.send(inMemoryRequest)) }
    } baseline: { _ in
      for _ in 0..<1_000 { blackHole(try await bare.send(inMemoryRequest)) }
    }
  }

  // The same stage with a tracer that records (swift-distributed-tracing's InMemoryTracer,
  // emptied after every 1,000 requests): the cost of a sampled request's span, attributes
  // included.
  let recorder = InMemoryTracer(recordInjections: false)
  let recorded = RequestChain(transport: inMemoryTransport, middleware: [RequestTracing(tracer: recorder)])
  comparison("RequestChain stage cost: RequestTracing, recording (InMemoryTracer) vs no stage", batch: 1_000) { _ in
    for _ in 0..<1_000 { blackHole(try await recorded.send(inMemoryRequest)) }
    recorder.clearAll()
  } baseline: { _ in
    for _ in 0..<1_000 { blackHole(try await bare.send(inMemoryRequest)) }
  }

  // A handler GET over loopback with the three observation stages (a span, a timer, a
  // LoggingWatch at debug under an info logger) and the reporter reading its counters, against
  // the same handler without them.
  for client in Client.allCases {
    let plainHandler = NetworkHandler(transport: client.transport)
    let observedHandler = NetworkHandler(
      chain: RequestChain(
        transport: client.transport,
        middleware: [RequestTracing(), RequestMetrics()] + plainHandler.chain.middleware
          + [Watching([LoggingWatch(logger: logger)])]))
    reporter.register(observedHandler, as: "articles-\(client.rawValue)")
    for inFlight in [1, 64] {
      let requests = inFlight == 1 ? 100 : 256
      // Outside the measured time: one exchange on each side, so both start with a connection.
      let setUp: @Sendable () async throws -> Void = {
        _ = try await observedHandler.request(articles)
        _ = try await plainHandler.request(articles)
      }
      comparison(
        "NetworkHandler GET 1 KB, traced, timed, logged and reported (no-op backends) vs the same handler unobserved (\(client.rawValue), \(inFlight) in flight)",
        batch: requests,
        maxIterations: 100,
        setUp: setUp
      ) { _ in
        try await runInFlight(requests, inFlight: inFlight) { _ in
          blackHole(try await observedHandler.request(articles))
        }
      } baseline: { _ in
        try await runInFlight(requests, inFlight: inFlight) { _ in
          blackHole(try await plainHandler.request(articles))
        }
      }
    }
  }
}
