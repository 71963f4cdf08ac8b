import KilnQuery
import KilnTesting
import Testing

@Suite("Command", .timeLimit(.minutes(1)))
struct CommandTests {
  @Test("builds a fresh query for each call, from its parameter")
  func freshQueryPerCall() async throws {
    let built = Recorder<String>()
    let command = Command { (name: String) in
      built.append(name)
      return AnyQuery<Int, any Error> { name.count }
    }
    #expect(try await command.execute("kiln") == 4)
    #expect(try await command.execute("bricks") == 6)
    #expect(built.values == ["kiln", "bricks"])
  }

  @Test("the completion form delivers the outcome exactly once")
  func completion() async {
    let outcomes = Recorder<Result<Int, APIError>>()
    let command = Command { (code: Int) in TypedQuery(outcome: code < 400 ? .success(code) : .failure(.status(code))) }
    await command.execute(200) { outcomes.append($0) }.value
    await command.execute(404) { outcomes.append($0) }.value
    #expect(outcomes.values == [.success(200), .failure(.status(404))])
  }

  @Test("counts the executions in flight")
  func executingCount() async throws {
    let spy = SpyQuery<Int, any Error>(.success(1))
    spy.hold()
    let command = Command { (_: Int) in spy }
    #expect(await !command.isExecuting)
    let a = Task { try await command.execute(1) }
    let b = Task { try await command.execute(2) }
    await spy.waitForLoads(2)
    #expect(await command.executingCount == 2)
    #expect(await command.isExecuting)

    spy.release()
    _ = try await (a.value, b.value)
    #expect(await command.executingCount == 0)
  }

  @Test("cancelling the completion task cancels the query and still calls back once")
  func cancelCompletion() async {
    let spy = SpyQuery<Int, any Error>(.success(1))
    spy.hold()
    let outcomes = Recorder<Bool>()
    let command = Command { (_: Int) in spy }
    let task = command.execute(1) { outcomes.append($0.failure is CancellationError) }
    await spy.waitForLoads(1)
    task.cancel()
    await task.value
    #expect(outcomes.values == [true])
    #expect(spy.cancelledCount == 1)
  }
}
