import KilnCore
import KilnTesting
import Testing
import _KilnSynchronization

/// A source whose counters the test sets.
final class SettableSource: CountingSource {
  private let values = KilnMutex<[CounterReading]>([])

  func set(_ readings: [CounterReading]) { values.withLock { $0 = readings } }

  func counterReadings() -> [CounterReading] { values.withLock { $0 } }
}

private enum Probe: Int, CaseIterable {
  case first, second, third
}

@Suite("Counters", .timeLimit(.minutes(1)))
struct CountersCoreTests {
  @Test("8 tasks adding 20,000 times each to three counters lose no increment")
  func atomicCountersUnderContention() async {
    let counters = AtomicCounters<Probe>()
    await withTaskGroup(of: Void.self) { group in
      for task in 0..<8 {
        group.addTask {
          for index in 0..<20_000 {
            counters.add(.first)
            counters.add(.second, 2)
            if index.isMultiple(of: 2) { counters.subtract(.third) } else { counters.add(.third, task) }
          }
        }
      }
    }
    #expect(counters[.first] == 160_000)
    #expect(counters[.second] == 320_000)
    // Each task subtracts 10,000 and adds 10,000 × its number: 10,000 × (0 + … + 7) − 80,000.
    #expect(counters[.third] == 10_000 * 28 - 80_000)
  }

  @Test("a reading's series names its dimensions; equal readings hash alike")
  func readings() {
    let hit = CounterReading("kiln_x_total", [("result", "hit"), ("tier", "memory")], value: 3)
    #expect(hit.series == "kiln_x_total{result=\"hit\",tier=\"memory\"}")
    #expect(CounterReading("kiln_y", value: 1, kind: .gauge).series == "kiln_y")
    #expect(hit == CounterReading("kiln_x_total", [("result", "hit"), ("tier", "memory")], value: 3))
    #expect(hit != CounterReading("kiln_x_total", [("result", "miss"), ("tier", "memory")], value: 3))
    #expect(Set([hit, hit]).count == 1)
  }
}

#if Metrics
  import CoreMetrics
  import MetricsTestKit

  @Suite("MetricsReporter (Metrics trait)", .timeLimit(.minutes(1)))
  struct MetricsReporterTests {
    @Test("counters are published as differences, gauges as values, with the source's name as a dimension")
    func report() throws {
      let metrics = TestMetrics()
      let source = SettableSource()
      let reporter = MetricsReporter(factory: metrics)
      reporter.register(source, as: "users")
      source.set([
        CounterReading("kiln_hits_total", [("result", "hit")], value: 5),
        CounterReading("kiln_entries", value: 40, kind: .gauge),
      ])
      reporter.report()
      let hits = try metrics.expectCounter("kiln_hits_total", [("result", "hit"), ("kiln_source", "users")])
      let entries = try metrics.expectGauge("kiln_entries", [("kiln_source", "users")])
      #expect(hits.totalValue == 5)
      #expect(entries.lastValue == 40)

      source.set([
        CounterReading("kiln_hits_total", [("result", "hit")], value: 12),
        CounterReading("kiln_entries", value: 38, kind: .gauge),
      ])
      reporter.report()
      reporter.report()  // nothing changed: nothing added
      #expect(hits.values == [5, 7])
      #expect(entries.lastValue == 38)

      // A counter that went down was replaced by a new source: its whole value is added.
      source.set([CounterReading("kiln_hits_total", [("result", "hit")], value: 2)])
      reporter.report()
      #expect(hits.totalValue == 14)
    }

    @Test("two sources of one kind are told apart by kiln_source; unregistering stops publishing")
    func sources() throws {
      let metrics = TestMetrics()
      let reporter = MetricsReporter(factory: metrics)
      let users = SettableSource()
      let posts = SettableSource()
      reporter.register(users, as: "users")
      reporter.register(posts, as: "posts")
      users.set([CounterReading("kiln_lookups_total", value: 1)])
      posts.set([CounterReading("kiln_lookups_total", value: 2)])
      reporter.report()
      #expect(reporter.sourceNames == ["users", "posts"])
      #expect(try metrics.expectCounter("kiln_lookups_total", [("kiln_source", "users")]).totalValue == 1)
      #expect(try metrics.expectCounter("kiln_lookups_total", [("kiln_source", "posts")]).totalValue == 2)
      reporter.unregister("posts")
      posts.set([CounterReading("kiln_lookups_total", value: 9)])
      reporter.report()
      #expect(try metrics.expectCounter("kiln_lookups_total", [("kiln_source", "posts")]).totalValue == 2)
    }

    @Test("a source registered again under a name replaces the first; overlapping reports never count twice")
    func replacementAndOverlap() async throws {
      let metrics = TestMetrics()
      let reporter = MetricsReporter(factory: metrics)
      let first = SettableSource()
      first.set([CounterReading("kiln_lookups_total", value: 10)])
      reporter.register(first, as: "cache")
      reporter.report()
      let second = SettableSource()
      second.set([CounterReading("kiln_lookups_total", value: 3)])
      reporter.register(second, as: "cache")  // a new cache under the same name: from its own 3
      reporter.report()
      #expect(reporter.sourceNames == ["cache"])
      #expect(metrics.counterTotal(label: "kiln_lookups_total") == 13)

      // 8 tasks report while the source climbs to 1,000: the backend ends at exactly 13 + 997.
      await withTaskGroup(of: Void.self) { group in
        group.addTask {
          for value in 4...1_000 { second.set([CounterReading("kiln_lookups_total", value: value)]) }
        }
        for _ in 0..<8 {
          group.addTask { for _ in 0..<200 { reporter.report() } }
        }
      }
      reporter.report()
      #expect(metrics.counterTotal(label: "kiln_lookups_total") == 1_010)
    }

    @Test("run() publishes every interval on the injected clock, and once more when cancelled")
    func run() async throws {
      let metrics = TestMetrics()
      let clock = ManualClock()
      let source = SettableSource()
      let reporter = MetricsReporter(interval: .seconds(10), clock: clock, factory: metrics)
      reporter.register(source, as: "cache")
      source.set([CounterReading("kiln_lookups_total", value: 1)])
      let running = Task { await reporter.run() }
      await clock.waitForSleepers(count: 1)
      #expect(metrics.counters.isEmpty)
      clock.advance(by: .seconds(10))
      await clock.waitForSleepers(count: 1)
      let counter = try metrics.expectCounter("kiln_lookups_total", [("kiln_source", "cache")])
      #expect(counter.totalValue == 1)
      source.set([CounterReading("kiln_lookups_total", value: 4)])
      running.cancel()
      await running.value
      #expect(counter.totalValue == 4)
    }
  }

  #if ServiceLifecycle
    import Logging
    import ServiceLifecycle

    @Suite("MetricsReporter in a ServiceGroup (Metrics and ServiceLifecycle traits)", .timeLimit(.minutes(1)))
    struct MetricsReporterServiceTests {
      @Test("a graceful shutdown ends run() after a last report, with nothing left running")
      func gracefulShutdown() async throws {
        let metrics = TestMetrics()
        let clock = ManualClock()
        let source = SettableSource()
        let reporter = MetricsReporter(interval: .seconds(60), clock: clock, factory: metrics)
        reporter.register(source, as: "cache")
        let group = ServiceGroup(
          configuration: ServiceGroupConfiguration(services: [reporter], logger: Logger(label: "test")))
        let running = Task { try await group.run() }
        await clock.waitForSleepers(count: 1)
        source.set([CounterReading("kiln_lookups_total", value: 3)])
        await group.triggerGracefulShutdown()
        try await running.value
        #expect(try metrics.expectCounter("kiln_lookups_total", [("kiln_source", "cache")]).totalValue == 3)
        #expect(clock.sleeperCount == 0)
      }
    }
  #endif
#endif

@Suite("Prometheus text", .timeLimit(.minutes(1)))
struct PrometheusTextTests {
  @Test("one TYPE line per family, families in first-seen order, gauges typed, labels escaped")
  func rendersFamilies() {
    let text = CounterReading.prometheusText([
      CounterReading("kiln_a_total", [("result", "hit")], value: 3),
      CounterReading("kiln_b", value: 7, kind: .gauge),
      CounterReading("kiln_a_total", [("result", "miss")], value: 1),
      CounterReading("kiln_c_total", [("path", "a\\b \"q\"\nx\r\ny"), ("n", "1")], value: 0),
    ])
    #expect(
      text == """
        # TYPE kiln_a_total counter
        kiln_a_total{result="hit"} 3
        kiln_a_total{result="miss"} 1
        # TYPE kiln_b gauge
        kiln_b 7
        # TYPE kiln_c_total counter
        kiln_c_total{path="a\\\\b \\"q\\"\\nx\r\\ny",n="1"} 0

        """)
    #expect(CounterReading.prometheusText([]) == "")
  }

  @Test("sources: each series labelled kiln_source first, one family across sources")
  func labelsSources() {
    let first = SettableSource()
    first.set([CounterReading("kiln_x_total", [("result", "hit")], value: 2)])
    let second = SettableSource()
    second.set([
      CounterReading("kiln_x_total", [("result", "hit")], value: 5), CounterReading("kiln_y", value: 1, kind: .gauge),
    ])
    let text = CounterReading.prometheusText(sources: ["a": first, "b": second])
    #expect(
      text == """
        # TYPE kiln_x_total counter
        kiln_x_total{kiln_source="a",result="hit"} 2
        kiln_x_total{kiln_source="b",result="hit"} 5
        # TYPE kiln_y gauge
        kiln_y{kiln_source="b"} 1

        """)
  }
}
