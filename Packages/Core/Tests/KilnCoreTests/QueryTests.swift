import Foundation
import KilnCore
import KilnTesting
import Testing

/// A query with a concrete, typed failure: a plain struct conforming to `Query`.
private struct Lookup: Query {
  enum Failure: Error, Equatable { case notFound(Int) }
  let id: Int
  func load() async throws(Failure) -> String {
    guard id > 0 else { throw .notFound(id) }
    return "item \(id)"
  }
}

/// A query that cannot fail.
private struct Constant: Query {
  func load() async -> Int { 42 }
}

@Suite("Query", .timeLimit(.minutes(1)))
struct QueryTests {
  @Test("a conforming type loads its value")
  func loadsValue() async throws {
    #expect(try await Lookup(id: 3).load() == "item 3")
    #expect(await Constant().load() == 42)
  }

  @Test("a typed failure is thrown as its concrete type, without a cast")
  func typedFailure() async {
    do {
      _ = try await Lookup(id: -1).load()
      Issue.record("expected a failure")
    } catch {
      // `error` is statically `Lookup.Failure` here: no `as?` needed.
      #expect(error == .notFound(-1))
    }
  }

  @Test("result() reports success and typed failure")
  func resultForm() async {
    #expect(await Lookup(id: 1).result() == .success("item 1"))
    #expect(await Lookup(id: 0).result() == .failure(.notFound(0)))
    #expect(await Constant().result() == .success(42))
  }

  @Test("the completion is called exactly once with the success")
  func completionOnceSuccess() async {
    let calls = Recorder<Result<String, Lookup.Failure>>()
    await Lookup(id: 5).load { calls.append($0) }.value
    #expect(calls.values == [.success("item 5")])
  }

  @Test("the completion is called exactly once with the typed failure")
  func completionOnceFailure() async {
    let calls = Recorder<Result<String, Lookup.Failure>>()
    await Lookup(id: -2).load { calls.append($0) }.value
    #expect(calls.values == [.failure(.notFound(-2))])
  }

  @Test("the completion runs once even for many concurrent callback loads")
  func completionOnceConcurrently() async {
    let spy = SpyQuery<Int, Never> { .success($0) }
    let calls = Recorder<Int>()
    var tasks: [Task<Void, Never>] = []
    for _ in 0..<1_000 {
      tasks.append(
        spy.load { result in
          if case .success(let value) = result { calls.append(value) }
        })
    }
    for task in tasks { await task.value }
    #expect(calls.values.count == 1_000)
    #expect(Set(calls.values) == Set(1...1_000))
  }

  @Test("cancelling the completion task cancels the load and still calls back once")
  func completionTaskCancellation() async {
    let spy = SpyQuery<Int, any Error>(.success(1))
    spy.hold()
    let calls = Recorder<Result<Int, any Error>>()
    let task = spy.load { calls.append($0) }
    await spy.waitForLoads(1)
    task.cancel()
    await task.value

    #expect(calls.values.count == 1)
    #expect(spy.cancelledCount == 1)
    guard case .failure(let error) = calls.values.first else {
      Issue.record("expected the cancellation to be delivered, got \(calls.values)")
      return
    }
    #expect(error is CancellationError)
  }

  @Test("a cancelled task whose query cannot report cancellation still calls back once")
  func completionTaskCancellationNonThrowing() async {
    let spy = SpyQuery<Int, Never>(.success(7))
    spy.hold()
    let calls = Recorder<Result<Int, Never>>()
    let task = spy.load { calls.append($0) }
    await spy.waitForLoads(1)
    task.cancel()
    await task.value
    #expect(calls.values == [.success(7)])
    #expect(spy.cancelledCount == 1)
  }

  @Test("the completion task runs at the requested priority")
  func completionPriority() async {
    let seen = Recorder<TaskPriority>()
    let query = AnyQuery<Int, Never> {
      seen.append(Task.basePriority ?? .medium)
      return 1
    }
    await query.load(priority: .low) { _ in }.value
    #expect(seen.values == [.low])
  }
}
