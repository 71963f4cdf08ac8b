#if ServiceLifecycle
  import Foundation
  import KilnRepository
  import KilnRepositoryTesting
  import KilnTesting
  import Logging
  import ServiceLifecycle
  import Testing

  @Suite("Outbox in a ServiceGroup (ServiceLifecycle trait)", .timeLimit(.minutes(1)))
  struct OutboxServiceTests {
    @Test("a graceful shutdown closes the outbox: the pending change stays in the store and is sent after reopening")
    func gracefulShutdown() async throws {
      let fixture = WritesTests()
      let store = MemoryOutboxStore()
      let (outbox, writes) = try await fixture.writes(store: store)
      let group = ServiceGroup(
        configuration: ServiceGroupConfiguration(services: [outbox], logger: Logger(label: "test")))
      let running = Task { try await group.run() }
      _ = try await writes.mutate("a", 5)
      await fixture.mutator.waitForSend(0)  // in flight, never answered

      await group.triggerGracefulShutdown()
      try await running.value
      await #expect(throws: OutboxError.self) { try await writes.mutate("a", 6) }
      #expect(try await store.loadAll().count == 1, "the unanswered change stays, durable")

      let (reopened, _) = try await fixture.writes(store: store)
      await fixture.mutator.waitForSend(1)
      #expect(fixture.mutator.sends.map(\.change) == [5, 5])
      await reopened.close()
    }
  }
#endif
