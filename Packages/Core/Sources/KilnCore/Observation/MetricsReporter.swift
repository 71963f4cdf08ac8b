#if Metrics
  public import CoreMetrics
  import _KilnSynchronization
  #if Logging
    public import Logging
  #endif
  #if ServiceLifecycle
    import ServiceLifecycle
  #endif

  /// Publishes the counters of Kiln's caches, stores and request chains as swift-metrics
  /// counters and gauges: the `Metrics` trait.
  ///
  /// Kiln counts as it works (an atomic add, no metrics call on the hot path); the reporter
  /// reads every registered ``CountingSource`` at each ``interval`` and publishes what changed:
  /// a counter is incremented by the difference since its last reading, a gauge records its
  /// value. Names and dimensions are those of ``CounterReading``, plus a `kiln_source`
  /// dimension naming the component as you registered it (a bounded set you choose: never a
  /// URL or a key).
  ///
  /// ```swift
  /// MetricsSystem.bootstrap(PrometheusMetricsFactory())   // once, in main
  ///
  /// let reporter = MetricsReporter(interval: .seconds(10))
  /// reporter.register(handler, as: "payments")       // kiln_http_client_* and its HTTP cache's kiln_http_cache_*
  /// reporter.register(thumbnails, as: "thumbnails")   // kiln_memory_cache_*{kiln_source="thumbnails"}
  /// try await reporter.run()                          // or a ServiceGroup's service
  /// ```
  ///
  /// ``run()`` publishes once more when it ends, so a graceful shutdown loses no count. Call
  /// ``report()`` to publish at once (a test, or before exiting); reports never overlap.
  ///
  /// Register a component once: a handler's readings include its HTTP cache's, so registering
  /// the cache as well would publish them twice.
  public final class MetricsReporter: Sendable {
    /// How often ``run()`` publishes.
    public let interval: Duration

    /// The clock ``run()`` waits on.
    public let clock: any Clock<Duration>

    /// The metrics backend; `MetricsSystem.factory` by default.
    public let factory: any MetricsFactory

    private struct Source {
      let name: String
      let source: any CountingSource
    }

    private enum Handle {
      case counter(Counter, last: Int)
      case gauge(Gauge)
    }

    private struct State {
      var sources: [Source] = []
      /// Each series' metric and last value, by ``CounterReading/series`` and source.
      var handles: [String: Handle] = [:]
    }

    private let state = KilnMutex(State())
    /// Held across a whole report, so that two reports (the run loop's and a manual one) never
    /// apply their readings out of order: an older reading applied last would look like a
    /// counter reset and be added again. Sources never take it, so reading them under it
    /// cannot deadlock.
    private let reporting = KilnMutex(())

    #if Logging
      /// Where the reporter logs a report at `trace` and registrations at `debug`.
      public let logger: Logger?

      /// Creates a reporter that logs through `logger`.
      ///
      /// - Parameters:
      ///   - interval: How often ``run()`` publishes; 10 seconds by default.
      ///   - clock: The clock of the waits; the continuous clock by default.
      ///   - factory: The metrics backend; `MetricsSystem.factory` by default.
      ///   - logger: Where the reporter logs.
      public init(
        interval: Duration = .seconds(10), clock: any Clock<Duration> = ContinuousClock(),
        factory: any MetricsFactory = MetricsSystem.factory, logger: Logger?
      ) {
        self.interval = interval
        self.clock = clock
        self.factory = factory
        self.logger = logger
      }
    #endif

    /// Creates a reporter.
    ///
    /// - Parameters:
    ///   - interval: How often ``run()`` publishes; 10 seconds by default.
    ///   - clock: The clock of the waits; the continuous clock by default.
    ///   - factory: The metrics backend; `MetricsSystem.factory` by default.
    public init(
      interval: Duration = .seconds(10), clock: any Clock<Duration> = ContinuousClock(),
      factory: any MetricsFactory = MetricsSystem.factory
    ) {
      self.interval = interval
      self.clock = clock
      self.factory = factory
      #if Logging
        self.logger = nil
      #endif
    }

    /// Adds `source`, whose readings are published with the dimension `kiln_source` = `name`.
    ///
    /// A name names one source: registering another under it replaces the first, and the new
    /// one's counters are published from their own values (its first report adds them whole).
    ///
    /// - Parameters:
    ///   - source: A cache, store, chain or handler.
    ///   - name: What the component is, from a small set (`"users"`, `"payments"`).
    public func register(_ source: any CountingSource, as name: String) {
      state.withLock { state in
        Self.forget(name, in: &state)
        state.sources.append(Source(name: name, source: source))
      }
      #if Logging
        logger?.debug("Kiln metrics: registered source", metadata: ["kiln_source": "\(name)"])
      #endif
    }

    /// Removes the source registered as `name`; its metrics stay with the backend.
    public func unregister(_ name: String) {
      state.withLock { state in Self.forget(name, in: &state) }
    }

    /// Drops the source named `name` and the last values of its series.
    private static func forget(_ name: String, in state: inout State) {
      state.sources.removeAll { $0.name == name }
      let prefix = name + "\u{1F}"
      state.handles = state.handles.filter { !$0.key.hasPrefix(prefix) }
    }

    /// The names of the registered sources, in order.
    public var sourceNames: [String] {
      state.withLock { $0.sources.map(\.name) }
    }

    /// Reads every source and publishes what changed since the last report.
    ///
    /// A counter that went down (a source replaced by a new one under the same name) is
    /// published from zero again: its whole value is added.
    public func report() {
      reporting.withLock { _ in reportNow() }
    }

    private func reportNow() {
      let sources = state.withLock { $0.sources }
      // Read outside the lock: a source's reading takes its own locks.
      let readings = sources.map { ($0.name, $0.source.counterReadings()) }
      var published = 0
      state.withLock { state in
        for (name, sourceReadings) in readings {
          for reading in sourceReadings {
            let key = name + "\u{1F}" + reading.series
            switch (reading.kind, state.handles[key]) {
            case (.counter, .counter(let counter, let last)?):
              let delta = reading.value >= last ? reading.value - last : reading.value
              if delta > 0 {
                counter.increment(by: Int64(delta))
                published += 1
              }
              state.handles[key] = .counter(counter, last: reading.value)
            case (.counter, _):
              let counter = Counter(
                label: reading.name, dimensions: reading.dimensions + [("kiln_source", name)], factory: factory)
              if reading.value > 0 {
                counter.increment(by: Int64(reading.value))
                published += 1
              }
              state.handles[key] = .counter(counter, last: reading.value)
            case (.gauge, .gauge(let gauge)?):
              gauge.record(reading.value)
              published += 1
            case (.gauge, _):
              let gauge = Gauge(
                label: reading.name, dimensions: reading.dimensions + [("kiln_source", name)], factory: factory)
              gauge.record(reading.value)
              state.handles[key] = .gauge(gauge)
              published += 1
            }
          }
        }
      }
      #if Logging
        logger?.trace("Kiln metrics: reported", metadata: ["kiln_series": "\(published)"])
      #endif
    }

    /// Publishes every ``interval`` until the task is cancelled (or, with the `ServiceLifecycle`
    /// trait, until a graceful shutdown), then once more.
    public func run() async {
      #if ServiceLifecycle
        await cancelWhenGracefulShutdown { await self.reportRepeatedly() }
      #else
        await reportRepeatedly()
      #endif
      report()
    }

    private func reportRepeatedly() async {
      while true {
        do {
          try await clock.sleep(for: interval)
        } catch {
          return
        }
        report()
      }
    }
  }
#endif
