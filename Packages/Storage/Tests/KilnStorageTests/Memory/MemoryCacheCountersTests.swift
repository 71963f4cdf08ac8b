import Foundation
import KilnCore
import KilnStorage
import KilnTesting
import Testing

@Suite("MemoryCache's counters as readings")
struct MemoryCacheCountersTests {
  @Test("readings give the statistics and the size under their export names")
  func readings() {
    let date = Date(timeIntervalSince1970: 0)
    let cache = MemoryCache<String, Int>(countLimit: 2, entryLifetime: .seconds(60), now: { date })
    cache["a"] = 1
    cache["b"] = 2
    cache["c"] = 3  // evicts "a"
    _ = cache["b"]
    _ = cache["a"]
    let readings = cache.counterReadings()
    #expect(counterValue(readings, "kiln_memory_cache_lookups_total", [("result", "hit")]) == 1)
    #expect(counterValue(readings, "kiln_memory_cache_lookups_total", [("result", "miss")]) == 1)
    #expect(counterValue(readings, "kiln_memory_cache_evictions_total") == 1)
    #expect(counterValue(readings, "kiln_memory_cache_entries") == 2)
    #expect(readings.first { $0.name == "kiln_memory_cache_entries" }?.kind == .gauge)
    #expect(counterValue(readings, "kiln_memory_cache_cost") == cache.totalCost)
  }
}

#if ServiceLifecycle
  import Logging
  import ServiceLifecycle

  @Suite("SQLiteStore in a ServiceGroup (ServiceLifecycle trait)", .timeLimit(.minutes(1)))
  struct SQLiteStoreServiceTests {
    @Test(
      "a graceful shutdown while writes are in flight: each write is acknowledged or refused, and a new store reads every acknowledged one"
    )
    func gracefulShutdown() async throws {
      try await withTemporaryDirectory { directory in
        let url = directory.appending(path: "cache.sqlite")
        let store = try SQLiteStore<String, Int>(url: url)
        let group = ServiceGroup(
          configuration: ServiceGroupConfiguration(services: [store], logger: Logger(label: "test")))
        let running = Task { try await group.run() }
        // Four writers write until the store refuses them.
        let written = Recorder<Int>()
        let writers = Task {
          await withTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
              group.addTask {
                var index = writer
                while (try? await store.setValue(index, forKey: "k\(index)")) != nil {
                  written.append(index)
                  index += 4
                }
              }
            }
          }
        }
        try #require(await poll(timeout: .seconds(30)) { written.count >= 100 })
        await group.triggerGracefulShutdown()
        try await running.value
        await writers.value  // every writer was refused: the store is closed
        let acknowledged = written.values
        #expect(acknowledged.count >= 100)
        let late = await #expect(throws: SQLiteStoreError.self) { try await store.setValue(1, forKey: "late") }
        guard case .closed = late else {
          Issue.record("a write after the shutdown threw \(String(describing: late)), not .closed")
          return
        }

        let reopened = try SQLiteStore<String, Int>(url: url)
        for index in acknowledged {
          #expect(try await reopened.value(forKey: "k\(index)") == index)
        }
        await reopened.close()
      }
    }
  }
#endif
