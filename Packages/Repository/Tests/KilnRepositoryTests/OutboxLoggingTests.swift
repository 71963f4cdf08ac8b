#if Logging
  import Foundation
  import InMemoryLogging
  import KilnRepository
  import KilnRepositoryTesting
  import KilnStorage
  import KilnTesting
  import Logging
  import Testing

  @Suite("Outbox logging (Logging trait)", .timeLimit(.minutes(1)))
  struct OutboxLoggingTests {
    @Test(
      "a pause logs at warning, a failed attempt at debug, resuming at info, a rejection at notice; a change recorded logs nothing"
    )
    func levels() async throws {
      let fixture = WritesTests()
      let handler = InMemoryLogHandler()
      var logger = Logger(label: "test.outbox") { _ in handler }
      logger.logLevel = .trace
      let outbox = try await Outbox.open(
        MemoryOutboxStore(), clock: fixture.clock, options: WritesTests.options, logger: logger,
        now: fixture.clock.dateProvider)
      let writes = try await fixture.repository.writes(
        through: fixture.mutator, outbox: outbox, channel: "counts", paramCodec: .automatic, changeCodec: .automatic)
      try await writes.mutate("a", 5)
      await fixture.mutator.waitForSend(0)
      #expect(handler.entries.isEmpty)
      fixture.mutator.fail(0, with: .unreachable(URLError(.notConnectedToInternet)))
      try await waitUntil { await outbox.isPaused }
      await outbox.resume()
      await fixture.mutator.waitForSend(1)
      fixture.mutator.fail(1, with: .rejected(status: 409, body: nil))
      #expect(await poll(timeout: .seconds(30)) { handler.entries.count == 4 })

      let entries = handler.entries
      #expect(entries.map(\.level) == [.warning, .debug, .info, .notice])
      #expect(entries[0].message.description.contains("unreachable"))
      #expect(entries[3].metadata["kiln_status"] == "409")
      #expect(entries[3].metadata["kiln_channel"] == "counts")
      #expect(outbox.logger != nil)
      await outbox.close()
    }
  }
#endif
